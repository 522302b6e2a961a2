DROP TRIGGER IF EXISTS [dbo].[Orders_I_log]
GO

DROP TRIGGER IF EXISTS [dbo].[Orders_U_log]
GO

DROP TRIGGER IF EXISTS [dbo].[Orders_D_log]
GO

DROP TABLE IF EXISTS [dbo].[RLOG_Orders]
GO
