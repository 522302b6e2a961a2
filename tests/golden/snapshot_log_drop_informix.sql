-- run with DELIMIDENT=y; the server must run with TZ=UTC

DROP TRIGGER IF EXISTS "sales"."orders_I_log";

DROP TRIGGER IF EXISTS "sales"."orders_U_log";

DROP TRIGGER IF EXISTS "sales"."orders_D_log";

DROP PROCEDURE IF EXISTS "sales"."orders_R_proc";

DROP PROCEDURE IF EXISTS "sales"."orders_U_proc";

DROP TABLE IF EXISTS "sales"."RLOG_orders";
