DROP TRIGGER IF EXISTS "sales_orders_I_log" ON "sales"."orders";

DROP TRIGGER IF EXISTS "sales_orders_U_log" ON "sales"."orders";

DROP TRIGGER IF EXISTS "sales_orders_D_log" ON "sales"."orders";

DROP FUNCTION IF EXISTS "sales"."sales_orders_rlog_fn"();

DROP TABLE IF EXISTS "sales"."RLOG_orders";

DROP TRIGGER IF EXISTS "sales_orders_T_log" ON "sales"."orders";

DO $snaprepl$
BEGIN
  IF pg_catalog.to_regclass('"sales"."rlog_snaprepl_guard"') IS NULL THEN RETURN; END IF;
  DELETE FROM "sales"."rlog_snaprepl_guard" WHERE tbl = 'orders' OR tbl NOT IN (SELECT c.relname FROM pg_catalog.pg_class c
    WHERE c.relnamespace = (SELECT n.oid FROM pg_catalog.pg_namespace n WHERE n.nspname = 'sales'));
  IF EXISTS (SELECT 1 FROM "sales"."rlog_snaprepl_guard" WHERE event = 'watch') THEN RETURN; END IF;
  BEGIN
    DROP EVENT TRIGGER IF EXISTS "snaprepl_guard_sales_ddl";
    DROP EVENT TRIGGER IF EXISTS "snaprepl_guard_sales_drop";
  EXCEPTION WHEN OTHERS THEN
    RAISE WARNING USING MESSAGE = 'snaprepl could not drop its event triggers: ' || SQLERRM;
    RETURN;
  END;
  DROP FUNCTION IF EXISTS "sales"."snaprepl_guard_ddl"();
  DROP FUNCTION IF EXISTS "sales"."snaprepl_guard_drop"();
  DROP FUNCTION IF EXISTS "sales"."snaprepl_guard_truncate"() CASCADE;
  DROP TABLE "sales"."rlog_snaprepl_guard";
END $snaprepl$;
