CREATE TABLE "main"."RLOG_orders" (
  "RLOG_order_id" INTEGER NOT NULL,
  "RLOG_line_no" INTEGER NOT NULL,
  "SNAPTIME" TEXT NOT NULL,
  "DMLTYPE" TEXT NOT NULL,
  "RLOG_ROWGUID" TEXT NOT NULL,
  PRIMARY KEY ("RLOG_order_id", "RLOG_line_no")
);

CREATE TRIGGER "main"."main_orders_I_log" AFTER INSERT ON "orders" FOR EACH ROW BEGIN
  INSERT INTO "RLOG_orders" ("RLOG_order_id", "RLOG_line_no", "SNAPTIME", "DMLTYPE", "RLOG_ROWGUID")
    SELECT NEW."order_id", NEW."line_no", strftime('%Y-%m-%d %H:%M:%f', 'now'), 'I', lower(hex(randomblob(4))) || '-' || lower(hex(randomblob(2))) || '-4' || substr(lower(hex(randomblob(2))), 2) || '-' || substr('89ab', 1 + (abs(random()) % 4), 1) || substr(lower(hex(randomblob(2))), 2) || '-' || lower(hex(randomblob(6))) WHERE true
    ON CONFLICT ("RLOG_order_id", "RLOG_line_no") DO UPDATE SET "SNAPTIME" = excluded."SNAPTIME", "DMLTYPE" = excluded."DMLTYPE", "RLOG_ROWGUID" = excluded."RLOG_ROWGUID";
END;

CREATE TRIGGER "main"."main_orders_U_log" AFTER UPDATE ON "orders" FOR EACH ROW BEGIN
  INSERT INTO "RLOG_orders" ("RLOG_order_id", "RLOG_line_no", "SNAPTIME", "DMLTYPE", "RLOG_ROWGUID")
    SELECT OLD."order_id", OLD."line_no", strftime('%Y-%m-%d %H:%M:%f', 'now'), 'D', lower(hex(randomblob(4))) || '-' || lower(hex(randomblob(2))) || '-4' || substr(lower(hex(randomblob(2))), 2) || '-' || substr('89ab', 1 + (abs(random()) % 4), 1) || substr(lower(hex(randomblob(2))), 2) || '-' || lower(hex(randomblob(6))) WHERE NOT (OLD."order_id" IS NEW."order_id" AND OLD."line_no" IS NEW."line_no")
    ON CONFLICT ("RLOG_order_id", "RLOG_line_no") DO UPDATE SET "SNAPTIME" = excluded."SNAPTIME", "DMLTYPE" = excluded."DMLTYPE", "RLOG_ROWGUID" = excluded."RLOG_ROWGUID";
  INSERT INTO "RLOG_orders" ("RLOG_order_id", "RLOG_line_no", "SNAPTIME", "DMLTYPE", "RLOG_ROWGUID")
    SELECT NEW."order_id", NEW."line_no", strftime('%Y-%m-%d %H:%M:%f', 'now'), CASE WHEN OLD."order_id" IS NEW."order_id" AND OLD."line_no" IS NEW."line_no" THEN 'U' ELSE 'I' END, lower(hex(randomblob(4))) || '-' || lower(hex(randomblob(2))) || '-4' || substr(lower(hex(randomblob(2))), 2) || '-' || substr('89ab', 1 + (abs(random()) % 4), 1) || substr(lower(hex(randomblob(2))), 2) || '-' || lower(hex(randomblob(6))) WHERE true
    ON CONFLICT ("RLOG_order_id", "RLOG_line_no") DO UPDATE SET "SNAPTIME" = excluded."SNAPTIME", "DMLTYPE" = excluded."DMLTYPE", "RLOG_ROWGUID" = excluded."RLOG_ROWGUID";
END;

CREATE TRIGGER "main"."main_orders_D_log" AFTER DELETE ON "orders" FOR EACH ROW BEGIN
  INSERT INTO "RLOG_orders" ("RLOG_order_id", "RLOG_line_no", "SNAPTIME", "DMLTYPE", "RLOG_ROWGUID")
    SELECT OLD."order_id", OLD."line_no", strftime('%Y-%m-%d %H:%M:%f', 'now'), 'D', lower(hex(randomblob(4))) || '-' || lower(hex(randomblob(2))) || '-4' || substr(lower(hex(randomblob(2))), 2) || '-' || substr('89ab', 1 + (abs(random()) % 4), 1) || substr(lower(hex(randomblob(2))), 2) || '-' || lower(hex(randomblob(6))) WHERE true
    ON CONFLICT ("RLOG_order_id", "RLOG_line_no") DO UPDATE SET "SNAPTIME" = excluded."SNAPTIME", "DMLTYPE" = excluded."DMLTYPE", "RLOG_ROWGUID" = excluded."RLOG_ROWGUID";
END;
