CREATE TABLE "sales"."RLOG_orders" (
  "RLOG_order_id" integer NOT NULL,
  "RLOG_line_no" smallint NOT NULL,
  "SNAPTIME" timestamp(6) NOT NULL,
  "DMLTYPE" char(1) NOT NULL,
  "RLOG_ROWGUID" varchar(255) NOT NULL,
  PRIMARY KEY ("RLOG_order_id", "RLOG_line_no")
);

ALTER TABLE "sales"."RLOG_orders" ADD COLUMN "SNAPXID" xid8;

CREATE FUNCTION "sales"."sales_orders_rlog_fn"() RETURNS trigger LANGUAGE plpgsql AS $snaprepl$
BEGIN
  IF TG_OP = 'INSERT' THEN
    INSERT INTO "sales"."RLOG_orders" ("RLOG_order_id", "RLOG_line_no", "SNAPTIME", "DMLTYPE", "RLOG_ROWGUID", "SNAPXID") VALUES (NEW."order_id", NEW."line_no", (now() AT TIME ZONE 'UTC'), 'I', gen_random_uuid()::text, pg_current_xact_id())
      ON CONFLICT ("RLOG_order_id", "RLOG_line_no") DO UPDATE SET "SNAPTIME" = EXCLUDED."SNAPTIME", "DMLTYPE" = EXCLUDED."DMLTYPE", "RLOG_ROWGUID" = EXCLUDED."RLOG_ROWGUID", "SNAPXID" = EXCLUDED."SNAPXID";
  ELSIF TG_OP = 'DELETE' THEN
    INSERT INTO "sales"."RLOG_orders" ("RLOG_order_id", "RLOG_line_no", "SNAPTIME", "DMLTYPE", "RLOG_ROWGUID", "SNAPXID") VALUES (OLD."order_id", OLD."line_no", (now() AT TIME ZONE 'UTC'), 'D', gen_random_uuid()::text, pg_current_xact_id())
      ON CONFLICT ("RLOG_order_id", "RLOG_line_no") DO UPDATE SET "SNAPTIME" = EXCLUDED."SNAPTIME", "DMLTYPE" = EXCLUDED."DMLTYPE", "RLOG_ROWGUID" = EXCLUDED."RLOG_ROWGUID", "SNAPXID" = EXCLUDED."SNAPXID";
  ELSIF OLD."order_id" IS DISTINCT FROM NEW."order_id" OR OLD."line_no" IS DISTINCT FROM NEW."line_no" THEN
    INSERT INTO "sales"."RLOG_orders" ("RLOG_order_id", "RLOG_line_no", "SNAPTIME", "DMLTYPE", "RLOG_ROWGUID", "SNAPXID") VALUES (OLD."order_id", OLD."line_no", (now() AT TIME ZONE 'UTC'), 'D', gen_random_uuid()::text, pg_current_xact_id())
      ON CONFLICT ("RLOG_order_id", "RLOG_line_no") DO UPDATE SET "SNAPTIME" = EXCLUDED."SNAPTIME", "DMLTYPE" = EXCLUDED."DMLTYPE", "RLOG_ROWGUID" = EXCLUDED."RLOG_ROWGUID", "SNAPXID" = EXCLUDED."SNAPXID";
    INSERT INTO "sales"."RLOG_orders" ("RLOG_order_id", "RLOG_line_no", "SNAPTIME", "DMLTYPE", "RLOG_ROWGUID", "SNAPXID") VALUES (NEW."order_id", NEW."line_no", (now() AT TIME ZONE 'UTC'), 'I', gen_random_uuid()::text, pg_current_xact_id())
      ON CONFLICT ("RLOG_order_id", "RLOG_line_no") DO UPDATE SET "SNAPTIME" = EXCLUDED."SNAPTIME", "DMLTYPE" = EXCLUDED."DMLTYPE", "RLOG_ROWGUID" = EXCLUDED."RLOG_ROWGUID", "SNAPXID" = EXCLUDED."SNAPXID";
  ELSE
    INSERT INTO "sales"."RLOG_orders" ("RLOG_order_id", "RLOG_line_no", "SNAPTIME", "DMLTYPE", "RLOG_ROWGUID", "SNAPXID") VALUES (NEW."order_id", NEW."line_no", (now() AT TIME ZONE 'UTC'), 'U', gen_random_uuid()::text, pg_current_xact_id())
      ON CONFLICT ("RLOG_order_id", "RLOG_line_no") DO UPDATE SET "SNAPTIME" = EXCLUDED."SNAPTIME", "DMLTYPE" = EXCLUDED."DMLTYPE", "RLOG_ROWGUID" = EXCLUDED."RLOG_ROWGUID", "SNAPXID" = EXCLUDED."SNAPXID";
  END IF;
  RETURN NULL;
END
$snaprepl$;

CREATE TRIGGER "sales_orders_I_log" AFTER INSERT ON "sales"."orders" FOR EACH ROW EXECUTE FUNCTION "sales"."sales_orders_rlog_fn"();

CREATE TRIGGER "sales_orders_U_log" AFTER UPDATE ON "sales"."orders" FOR EACH ROW EXECUTE FUNCTION "sales"."sales_orders_rlog_fn"();

CREATE TRIGGER "sales_orders_D_log" AFTER DELETE ON "sales"."orders" FOR EACH ROW EXECUTE FUNCTION "sales"."sales_orders_rlog_fn"();

CREATE TABLE IF NOT EXISTS "sales"."rlog_snaprepl_guard" (id bigserial PRIMARY KEY, tbl text NOT NULL, trg text, event text NOT NULL, detail text, at timestamp(6) NOT NULL DEFAULT (clock_timestamp() AT TIME ZONE 'UTC'));

CREATE OR REPLACE FUNCTION "sales"."snaprepl_guard_truncate"() RETURNS trigger LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $snaprepl$
BEGIN
  IF TG_TABLE_SCHEMA = 'sales' THEN
    INSERT INTO "sales"."rlog_snaprepl_guard" (tbl, trg, event, detail) VALUES (TG_TABLE_NAME, TG_NAME, 'TRUNCATE', 'by ' || session_user);
  END IF;
  RETURN NULL;
END
$snaprepl$;

REVOKE ALL ON FUNCTION "sales"."snaprepl_guard_truncate"() FROM PUBLIC;

CREATE TRIGGER "sales_orders_T_log" AFTER TRUNCATE ON "sales"."orders" FOR EACH STATEMENT EXECUTE FUNCTION "sales"."snaprepl_guard_truncate"();

ALTER TABLE "sales"."orders" ENABLE ALWAYS TRIGGER "sales_orders_I_log";

ALTER TABLE "sales"."orders" ENABLE ALWAYS TRIGGER "sales_orders_U_log";

ALTER TABLE "sales"."orders" ENABLE ALWAYS TRIGGER "sales_orders_D_log";

ALTER TABLE "sales"."orders" ENABLE ALWAYS TRIGGER "sales_orders_T_log";

DELETE FROM "sales"."rlog_snaprepl_guard" WHERE tbl = 'orders';

INSERT INTO "sales"."rlog_snaprepl_guard" (tbl, trg, event) VALUES ('orders', 'sales_orders_I_log', 'watch'), ('orders', 'sales_orders_U_log', 'watch'), ('orders', 'sales_orders_D_log', 'watch'), ('orders', 'sales_orders_T_log', 'watch');
