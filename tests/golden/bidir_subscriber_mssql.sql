ALTER TABLE [dbo].[Orders] ADD [ROWGUID] varchar(255)
GO

UPDATE [dbo].[Orders] SET [ROWGUID] = 'pub1@' + CONVERT(varchar(36), NEWID()) WHERE [ROWGUID] IS NULL
GO

CREATE TABLE [dbo].[RLOG_Orders] (
  [RLOG_OrderID] int NOT NULL,
  [RLOG_LineNo] smallint NOT NULL,
  [SYNC_ID] VARCHAR(64) DEFAULT '' NOT NULL,
  [SNAPTIME] datetime2(6) NOT NULL,
  [DMLTYPE] char(1) NOT NULL,
  [RLOG_ROWGUID] varchar(255) NOT NULL,
  [OLD_ROWGUID] varchar(255),
  [ORIGIN] varchar(255) DEFAULT '' NOT NULL,
  PRIMARY KEY ([RLOG_OrderID], [RLOG_LineNo], [SYNC_ID])
)
GO

CREATE TRIGGER [dbo].[Orders_I_log] ON [dbo].[Orders] AFTER INSERT AS
BEGIN
  SET NOCOUNT ON;
  -- Users' rows come without a version: give them one of this server, and log them.
  -- Replicated rows bring theirs and are not logged (no echo).
  UPDATE t SET [ROWGUID] = 'pub1@' + CONVERT(varchar(36), NEWID()) FROM [dbo].[Orders] t JOIN inserted i ON t.[OrderID] = i.[OrderID] AND t.[LineNo] = i.[LineNo] WHERE i.[ROWGUID] IS NULL;
  MERGE [dbo].[RLOG_Orders] WITH (HOLDLOCK) AS l
  USING (SELECT t.[OrderID], t.[LineNo], t.[ROWGUID], NULL FROM [dbo].[Orders] t JOIN inserted i ON t.[OrderID] = i.[OrderID] AND t.[LineNo] = i.[LineNo] WHERE i.[ROWGUID] IS NULL) AS s ([k1], [k2], [guid], [old])
     ON l.[RLOG_OrderID] = s.[k1] AND l.[RLOG_LineNo] = s.[k2] AND l.[SYNC_ID] = ''
   WHEN MATCHED THEN UPDATE SET [SNAPTIME] = SYSUTCDATETIME(), [RLOG_ROWGUID] = s.[guid], [ORIGIN] = '', [DMLTYPE] = CASE WHEN l.[DMLTYPE] = 'D' THEN 'U' ELSE 'I' END, [OLD_ROWGUID] = CASE WHEN l.[DMLTYPE] = 'D' THEN l.[OLD_ROWGUID] ELSE NULL END
   WHEN NOT MATCHED THEN INSERT ([RLOG_OrderID], [RLOG_LineNo], [SYNC_ID], [SNAPTIME], [DMLTYPE], [RLOG_ROWGUID], [OLD_ROWGUID], [ORIGIN]) VALUES (s.[k1], s.[k2], '', SYSUTCDATETIME(), 'I', s.[guid], NULL, '');
END
GO

CREATE TRIGGER [dbo].[Orders_U_log] ON [dbo].[Orders] AFTER UPDATE AS
BEGIN
  SET NOCOUNT ON;
  -- A user's update keeps ROWGUID: old and new rows pair by it (a replicated write changes it).
  -- Keys that moved away are deletes, first; then every updated row gets a new version.
  MERGE [dbo].[RLOG_Orders] WITH (HOLDLOCK) AS l
  USING (SELECT d.[OrderID], d.[LineNo], 'pub1@' + CONVERT(varchar(36), NEWID()), d.[ROWGUID] FROM inserted i JOIN deleted d ON d.[ROWGUID] = i.[ROWGUID] WHERE NOT (i.[OrderID] = d.[OrderID] AND i.[LineNo] = d.[LineNo])) AS s ([k1], [k2], [guid], [old])
     ON l.[RLOG_OrderID] = s.[k1] AND l.[RLOG_LineNo] = s.[k2] AND l.[SYNC_ID] = ''
   WHEN MATCHED AND l.[DMLTYPE] = 'I' THEN DELETE
   WHEN MATCHED THEN UPDATE SET [SNAPTIME] = SYSUTCDATETIME(), [RLOG_ROWGUID] = s.[guid], [ORIGIN] = '', [DMLTYPE] = 'D', [OLD_ROWGUID] = l.[OLD_ROWGUID]
   WHEN NOT MATCHED THEN INSERT ([RLOG_OrderID], [RLOG_LineNo], [SYNC_ID], [SNAPTIME], [DMLTYPE], [RLOG_ROWGUID], [OLD_ROWGUID], [ORIGIN]) VALUES (s.[k1], s.[k2], '', SYSUTCDATETIME(), 'D', s.[guid], s.[old], '');
  UPDATE t SET [ROWGUID] = 'pub1@' + CONVERT(varchar(36), NEWID()) FROM [dbo].[Orders] t JOIN inserted i ON t.[OrderID] = i.[OrderID] AND t.[LineNo] = i.[LineNo] JOIN deleted d ON d.[ROWGUID] = i.[ROWGUID];
  MERGE [dbo].[RLOG_Orders] WITH (HOLDLOCK) AS l
  USING (SELECT i.[OrderID], i.[LineNo], t.[ROWGUID], NULL FROM inserted i JOIN deleted d ON d.[ROWGUID] = i.[ROWGUID] JOIN [dbo].[Orders] t ON t.[OrderID] = i.[OrderID] AND t.[LineNo] = i.[LineNo] WHERE NOT (i.[OrderID] = d.[OrderID] AND i.[LineNo] = d.[LineNo])) AS s ([k1], [k2], [guid], [old])
     ON l.[RLOG_OrderID] = s.[k1] AND l.[RLOG_LineNo] = s.[k2] AND l.[SYNC_ID] = ''
   WHEN MATCHED THEN UPDATE SET [SNAPTIME] = SYSUTCDATETIME(), [RLOG_ROWGUID] = s.[guid], [ORIGIN] = '', [DMLTYPE] = CASE WHEN l.[DMLTYPE] = 'D' THEN 'U' ELSE 'I' END, [OLD_ROWGUID] = CASE WHEN l.[DMLTYPE] = 'D' THEN l.[OLD_ROWGUID] ELSE NULL END
   WHEN NOT MATCHED THEN INSERT ([RLOG_OrderID], [RLOG_LineNo], [SYNC_ID], [SNAPTIME], [DMLTYPE], [RLOG_ROWGUID], [OLD_ROWGUID], [ORIGIN]) VALUES (s.[k1], s.[k2], '', SYSUTCDATETIME(), 'I', s.[guid], NULL, '');
  MERGE [dbo].[RLOG_Orders] WITH (HOLDLOCK) AS l
  USING (SELECT i.[OrderID], i.[LineNo], t.[ROWGUID], d.[ROWGUID] FROM inserted i JOIN deleted d ON d.[ROWGUID] = i.[ROWGUID] JOIN [dbo].[Orders] t ON t.[OrderID] = i.[OrderID] AND t.[LineNo] = i.[LineNo] WHERE i.[OrderID] = d.[OrderID] AND i.[LineNo] = d.[LineNo]) AS s ([k1], [k2], [guid], [old])
     ON l.[RLOG_OrderID] = s.[k1] AND l.[RLOG_LineNo] = s.[k2] AND l.[SYNC_ID] = ''
   WHEN MATCHED THEN UPDATE SET [SNAPTIME] = SYSUTCDATETIME(), [RLOG_ROWGUID] = s.[guid], [ORIGIN] = '', [DMLTYPE] = CASE WHEN l.[DMLTYPE] = 'I' THEN 'I' ELSE 'U' END, [OLD_ROWGUID] = CASE WHEN l.[DMLTYPE] = 'I' THEN NULL ELSE l.[OLD_ROWGUID] END
   WHEN NOT MATCHED THEN INSERT ([RLOG_OrderID], [RLOG_LineNo], [SYNC_ID], [SNAPTIME], [DMLTYPE], [RLOG_ROWGUID], [OLD_ROWGUID], [ORIGIN]) VALUES (s.[k1], s.[k2], '', SYSUTCDATETIME(), 'U', s.[guid], s.[old], '');
END
GO

CREATE TRIGGER [dbo].[Orders_D_log] ON [dbo].[Orders] AFTER DELETE AS
BEGIN
  SET NOCOUNT ON;
  -- A replicated delete marks its rows first: those are not logged.
  MERGE [dbo].[RLOG_Orders] WITH (HOLDLOCK) AS l
  USING (SELECT d.[OrderID], d.[LineNo], 'pub1@' + CONVERT(varchar(36), NEWID()), d.[ROWGUID] FROM deleted d WHERE d.[ROWGUID] IS NULL OR d.[ROWGUID] <> 'snaprepl:delete') AS s ([k1], [k2], [guid], [old])
     ON l.[RLOG_OrderID] = s.[k1] AND l.[RLOG_LineNo] = s.[k2] AND l.[SYNC_ID] = ''
   WHEN MATCHED AND l.[DMLTYPE] = 'I' THEN DELETE
   WHEN MATCHED THEN UPDATE SET [SNAPTIME] = SYSUTCDATETIME(), [RLOG_ROWGUID] = s.[guid], [ORIGIN] = '', [DMLTYPE] = 'D', [OLD_ROWGUID] = l.[OLD_ROWGUID]
   WHEN NOT MATCHED THEN INSERT ([RLOG_OrderID], [RLOG_LineNo], [SYNC_ID], [SNAPTIME], [DMLTYPE], [RLOG_ROWGUID], [OLD_ROWGUID], [ORIGIN]) VALUES (s.[k1], s.[k2], '', SYSUTCDATETIME(), 'D', s.[guid], s.[old], '');
END
GO
