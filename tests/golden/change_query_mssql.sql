SELECT snaprepl_l.[RLOG_OrderID] AS [SNAPREPL_K0], snaprepl_l.[RLOG_LineNo] AS [SNAPREPL_K1], snaprepl_l.[SNAPTIME] AS [SNAPREPL_SNAPTIME], snaprepl_l.[RLOG_ROWGUID] AS [SNAPREPL_ROWGUID], snaprepl_s.[SNAPREPL_PRESENT], snaprepl_s.[OrderID], snaprepl_s.[LineNo], snaprepl_s.[Amount] FROM [dbo].[RLOG_Orders] snaprepl_l LEFT JOIN (SELECT 1 AS [SNAPREPL_PRESENT], [OrderID], [LineNo], [Amount] FROM [dbo].[Orders]) snaprepl_s ON snaprepl_s.[OrderID] = snaprepl_l.[RLOG_OrderID] AND snaprepl_s.[LineNo] = snaprepl_l.[RLOG_LineNo] WHERE snaprepl_l.[SNAPTIME] >= '2026-01-02 03:04:05.678000';

SELECT snaprepl_l.[RLOG_OrderID] AS [SNAPREPL_K0], snaprepl_l.[RLOG_LineNo] AS [SNAPREPL_K1], snaprepl_l.[SNAPTIME] AS [SNAPREPL_SNAPTIME], snaprepl_l.[RLOG_ROWGUID] AS [SNAPREPL_ROWGUID], snaprepl_s.[SNAPREPL_PRESENT], snaprepl_s.[OrderID], snaprepl_s.[LineNo], snaprepl_s.[Amount] FROM [dbo].[RLOG_Orders] snaprepl_l LEFT JOIN (SELECT 1 AS [SNAPREPL_PRESENT], [OrderID], [LineNo], [Amount] FROM [dbo].[Orders] WHERE ([Amount] > 0)) snaprepl_s ON snaprepl_s.[OrderID] = snaprepl_l.[RLOG_OrderID] AND snaprepl_s.[LineNo] = snaprepl_l.[RLOG_LineNo] WHERE snaprepl_l.[SNAPTIME] >= '2026-01-02 03:04:05.678000';

SELECT COUNT(*) FROM [dbo].[RLOG_Orders] WHERE [SNAPTIME] >= '2026-01-02 03:04:05.678000';

SELECT [RLOG_ROWGUID] FROM [dbo].[RLOG_Orders] WHERE [SNAPTIME] >= '2026-01-02 03:04:05.678000';

SELECT COUNT(*) FROM (SELECT TOP (1001) * FROM (SELECT 1 AS snaprepl_one FROM [dbo].[RLOG_Orders] WHERE [SNAPTIME] >= '2026-01-02 03:04:05.678000') snaprepl_first) snaprepl_n;

CREATE INDEX [snaprepl_inc_0123456789_batch] ON [dbo].[snaprepl_inc_0123456789] ([SNAPREPL_BATCH], [SNAPREPL_OP]);

SELECT [SNAPREPL_BATCH], [SNAPREPL_OP], COUNT(*), MAX([SNAPREPL_SNAPTIME]) FROM [dbo].[snaprepl_inc_0123456789] GROUP BY [SNAPREPL_BATCH], [SNAPREPL_OP] ORDER BY [SNAPREPL_BATCH];

SELECT [SNAPREPL_BATCH], [SNAPREPL_ROWGUID], [SNAPREPL_SNAPTIME] FROM [dbo].[snaprepl_inc_0123456789];

SELECT snaprepl_l.[SNAPTIME] AS [SNAPREPL_SNAPTIME], COUNT(*) AS [SNAPREPL_N] FROM [dbo].[RLOG_Orders] snaprepl_l WHERE snaprepl_l.[SNAPTIME] >= '2026-01-02 03:04:05.678000' GROUP BY snaprepl_l.[SNAPTIME];

SELECT b.[SNAPREPL_BATCH], CASE WHEN c.[SNAPREPL_PRESENT] IS NOT NULL THEN 'U' ELSE 'D' END AS [SNAPREPL_OP], c.[SNAPREPL_ROWGUID], c.[SNAPREPL_SNAPTIME], c.[SNAPREPL_K0] AS [OrderID], c.[SNAPREPL_K1] AS [LineNo], c.[Amount] AS [Amount], NULL AS [gone] FROM (SELECT snaprepl_l.[RLOG_OrderID] AS [SNAPREPL_K0], snaprepl_l.[RLOG_LineNo] AS [SNAPREPL_K1], snaprepl_l.[SNAPTIME] AS [SNAPREPL_SNAPTIME], snaprepl_l.[RLOG_ROWGUID] AS [SNAPREPL_ROWGUID], snaprepl_s.[SNAPREPL_PRESENT], snaprepl_s.[OrderID], snaprepl_s.[LineNo], snaprepl_s.[Amount] FROM [dbo].[RLOG_Orders] snaprepl_l LEFT JOIN (SELECT 1 AS [SNAPREPL_PRESENT], [OrderID], [LineNo], [Amount] FROM [dbo].[Orders]) snaprepl_s ON snaprepl_s.[OrderID] = snaprepl_l.[RLOG_OrderID] AND snaprepl_s.[LineNo] = snaprepl_l.[RLOG_LineNo] WHERE snaprepl_l.[SNAPTIME] >= '2026-01-02 03:04:05.678000') c JOIN (SELECT g.[SNAPREPL_SNAPTIME], CAST(FLOOR((SUM(g.[SNAPREPL_N]) OVER (ORDER BY g.[SNAPREPL_SNAPTIME]) - g.[SNAPREPL_N]) / 500) AS int) AS [SNAPREPL_BATCH] FROM (SELECT snaprepl_l.[SNAPTIME] AS [SNAPREPL_SNAPTIME], COUNT(*) AS [SNAPREPL_N] FROM [dbo].[RLOG_Orders] snaprepl_l WHERE snaprepl_l.[SNAPTIME] >= '2026-01-02 03:04:05.678000' GROUP BY snaprepl_l.[SNAPTIME]) g) b ON b.[SNAPREPL_SNAPTIME] = c.[SNAPREPL_SNAPTIME];

