CREATE TABLE [dbo].[RLOG_Orders] (
  [RLOG_OrderID] int NOT NULL,
  [RLOG_LineNo] smallint NOT NULL,
  [SNAPTIME] datetime2(6) NOT NULL,
  [DMLTYPE] char(1) NOT NULL,
  [RLOG_ROWGUID] varchar(255) NOT NULL,
  PRIMARY KEY ([RLOG_OrderID], [RLOG_LineNo])
)
GO

CREATE TRIGGER [dbo].[Orders_I_log] ON [dbo].[Orders] AFTER INSERT AS
BEGIN
  SET NOCOUNT ON;
  MERGE [dbo].[RLOG_Orders] WITH (HOLDLOCK) AS l
  USING (SELECT [OrderID], [LineNo], 'I' FROM inserted) AS s ([k1], [k2], [op])
     ON l.[RLOG_OrderID] = s.[k1] AND l.[RLOG_LineNo] = s.[k2]
   WHEN MATCHED THEN UPDATE SET [SNAPTIME] = SYSUTCDATETIME(), [DMLTYPE] = s.[op], [RLOG_ROWGUID] = CONVERT(varchar(36), NEWID())
   WHEN NOT MATCHED THEN INSERT ([RLOG_OrderID], [RLOG_LineNo], [SNAPTIME], [DMLTYPE], [RLOG_ROWGUID]) VALUES (s.[k1], s.[k2], SYSUTCDATETIME(), s.[op], CONVERT(varchar(36), NEWID()));
END
GO

CREATE TRIGGER [dbo].[Orders_U_log] ON [dbo].[Orders] AFTER UPDATE AS
BEGIN
  SET NOCOUNT ON;
  MERGE [dbo].[RLOG_Orders] WITH (HOLDLOCK) AS l
  USING (SELECT d.[OrderID], d.[LineNo], 'D' FROM deleted d WHERE NOT EXISTS (SELECT 1 FROM inserted i WHERE i.[OrderID] = d.[OrderID] AND i.[LineNo] = d.[LineNo]) UNION ALL SELECT i.[OrderID], i.[LineNo], CASE WHEN EXISTS (SELECT 1 FROM deleted d WHERE i.[OrderID] = d.[OrderID] AND i.[LineNo] = d.[LineNo]) THEN 'U' ELSE 'I' END FROM inserted i) AS s ([k1], [k2], [op])
     ON l.[RLOG_OrderID] = s.[k1] AND l.[RLOG_LineNo] = s.[k2]
   WHEN MATCHED THEN UPDATE SET [SNAPTIME] = SYSUTCDATETIME(), [DMLTYPE] = s.[op], [RLOG_ROWGUID] = CONVERT(varchar(36), NEWID())
   WHEN NOT MATCHED THEN INSERT ([RLOG_OrderID], [RLOG_LineNo], [SNAPTIME], [DMLTYPE], [RLOG_ROWGUID]) VALUES (s.[k1], s.[k2], SYSUTCDATETIME(), s.[op], CONVERT(varchar(36), NEWID()));
END
GO

CREATE TRIGGER [dbo].[Orders_D_log] ON [dbo].[Orders] AFTER DELETE AS
BEGIN
  SET NOCOUNT ON;
  MERGE [dbo].[RLOG_Orders] WITH (HOLDLOCK) AS l
  USING (SELECT [OrderID], [LineNo], 'D' FROM deleted) AS s ([k1], [k2], [op])
     ON l.[RLOG_OrderID] = s.[k1] AND l.[RLOG_LineNo] = s.[k2]
   WHEN MATCHED THEN UPDATE SET [SNAPTIME] = SYSUTCDATETIME(), [DMLTYPE] = s.[op], [RLOG_ROWGUID] = CONVERT(varchar(36), NEWID())
   WHEN NOT MATCHED THEN INSERT ([RLOG_OrderID], [RLOG_LineNo], [SNAPTIME], [DMLTYPE], [RLOG_ROWGUID]) VALUES (s.[k1], s.[k2], SYSUTCDATETIME(), s.[op], CONVERT(varchar(36), NEWID()));
END
GO
