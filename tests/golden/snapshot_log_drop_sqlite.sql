DROP TRIGGER IF EXISTS "main"."main_orders_I_log";

DROP TRIGGER IF EXISTS "main"."main_orders_U_log";

DROP TRIGGER IF EXISTS "main"."main_orders_D_log";

DROP TABLE IF EXISTS "main"."RLOG_orders";
