DROP TRIGGER IF EXISTS "sales_orders_I_log" ON "sales"."orders";

DROP TRIGGER IF EXISTS "sales_orders_U_log" ON "sales"."orders";

DROP TRIGGER IF EXISTS "sales_orders_D_log" ON "sales"."orders";

DROP FUNCTION IF EXISTS "sales"."sales_orders_rlog_fn"();

DROP TABLE IF EXISTS "sales"."RLOG_orders";
