-- run with DELIMIDENT=y; the server must run with TZ=UTC

CREATE TABLE "sales"."RLOG_orders" (
  "RLOG_order_id" INTEGER NOT NULL,
  "RLOG_line_no" SMALLINT NOT NULL,
  "SNAPTIME" DATETIME YEAR TO FRACTION(5) NOT NULL,
  "DMLTYPE" CHAR(1) NOT NULL,
  "RLOG_ROWGUID" VARCHAR(255) NOT NULL,
  PRIMARY KEY ("RLOG_order_id", "RLOG_line_no")
);

CREATE SEQUENCE IF NOT EXISTS "opl_seq_rowguid";

CREATE PROCEDURE "sales"."orders_R_proc"(k1 INTEGER, k2 SMALLINT, op CHAR(1))
  UPDATE "sales"."RLOG_orders" SET "SNAPTIME" = CURRENT YEAR TO FRACTION(5), "DMLTYPE" = op, "RLOG_ROWGUID" = 'IFX' || "opl_seq_rowguid".NEXTVAL WHERE "RLOG_order_id" = k1 AND "RLOG_line_no" = k2;
  IF DBINFO('sqlca.sqlerrd2') = 0 THEN
    INSERT INTO "sales"."RLOG_orders" ("RLOG_order_id", "RLOG_line_no", "SNAPTIME", "DMLTYPE", "RLOG_ROWGUID")
      VALUES (k1, k2, CURRENT YEAR TO FRACTION(5), op, 'IFX' || "opl_seq_rowguid".NEXTVAL);
  END IF;
END PROCEDURE;

CREATE PROCEDURE "sales"."orders_U_proc"(o1 INTEGER, o2 SMALLINT, n1 INTEGER, n2 SMALLINT)
  IF o1 <> n1 OR o2 <> n2 THEN
    EXECUTE PROCEDURE "sales"."orders_R_proc"(o1, o2, 'D');
    EXECUTE PROCEDURE "sales"."orders_R_proc"(n1, n2, 'I');
  ELSE
    EXECUTE PROCEDURE "sales"."orders_R_proc"(n1, n2, 'U');
  END IF;
END PROCEDURE;

CREATE TRIGGER "sales"."orders_I_log" INSERT ON "sales"."orders" REFERENCING NEW AS n FOR EACH ROW
  (EXECUTE PROCEDURE "sales"."orders_R_proc"(n."order_id", n."line_no", 'I'));

CREATE TRIGGER "sales"."orders_U_log" UPDATE ON "sales"."orders" REFERENCING OLD AS o NEW AS n FOR EACH ROW
  (EXECUTE PROCEDURE "sales"."orders_U_proc"(o."order_id", o."line_no", n."order_id", n."line_no"));

CREATE TRIGGER "sales"."orders_D_log" DELETE ON "sales"."orders" REFERENCING OLD AS o FOR EACH ROW
  (EXECUTE PROCEDURE "sales"."orders_R_proc"(o."order_id", o."line_no", 'D'));
