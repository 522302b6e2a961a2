SELECT snaprepl_l."RLOG_order_id" AS "SNAPREPL_K0", snaprepl_l."RLOG_line_no" AS "SNAPREPL_K1", snaprepl_l."SNAPTIME" AS "SNAPREPL_SNAPTIME", snaprepl_l."RLOG_ROWGUID" AS "SNAPREPL_ROWGUID", snaprepl_s."SNAPREPL_PRESENT", snaprepl_s."order_id", snaprepl_s."line_no", snaprepl_s."amount" FROM "sales"."RLOG_orders" snaprepl_l LEFT JOIN (SELECT 1 AS "SNAPREPL_PRESENT", "order_id", "line_no", "amount" FROM "sales"."orders") snaprepl_s ON snaprepl_s."order_id" = snaprepl_l."RLOG_order_id" AND snaprepl_s."line_no" = snaprepl_l."RLOG_line_no" WHERE snaprepl_l."SNAPTIME" >= '2026-01-02 03:04:05.678000';

SELECT snaprepl_l."RLOG_order_id" AS "SNAPREPL_K0", snaprepl_l."RLOG_line_no" AS "SNAPREPL_K1", snaprepl_l."SNAPTIME" AS "SNAPREPL_SNAPTIME", snaprepl_l."RLOG_ROWGUID" AS "SNAPREPL_ROWGUID", snaprepl_s."SNAPREPL_PRESENT", snaprepl_s."order_id", snaprepl_s."line_no", snaprepl_s."amount" FROM "sales"."RLOG_orders" snaprepl_l LEFT JOIN (SELECT 1 AS "SNAPREPL_PRESENT", "order_id", "line_no", "amount" FROM "sales"."orders" WHERE ("amount" > 0)) snaprepl_s ON snaprepl_s."order_id" = snaprepl_l."RLOG_order_id" AND snaprepl_s."line_no" = snaprepl_l."RLOG_line_no" WHERE snaprepl_l."SNAPTIME" >= '2026-01-02 03:04:05.678000';

SELECT COUNT(*) FROM "sales"."RLOG_orders" WHERE "SNAPTIME" >= '2026-01-02 03:04:05.678000';

SELECT "RLOG_ROWGUID" FROM "sales"."RLOG_orders" WHERE "SNAPTIME" >= '2026-01-02 03:04:05.678000';

SELECT COUNT(*) FROM (SELECT 1 AS snaprepl_one FROM "sales"."RLOG_orders" WHERE "SNAPTIME" >= '2026-01-02 03:04:05.678000' LIMIT 1001) snaprepl_n;

CREATE INDEX "snaprepl_inc_0123456789_batch" ON "sales"."snaprepl_inc_0123456789" ("SNAPREPL_BATCH", "SNAPREPL_OP");

SELECT "SNAPREPL_BATCH", "SNAPREPL_OP", COUNT(*), MAX("SNAPREPL_SNAPTIME") FROM "sales"."snaprepl_inc_0123456789" GROUP BY "SNAPREPL_BATCH", "SNAPREPL_OP" ORDER BY "SNAPREPL_BATCH";

SELECT "SNAPREPL_BATCH", "SNAPREPL_ROWGUID", "SNAPREPL_SNAPTIME" FROM "sales"."snaprepl_inc_0123456789";

SELECT snaprepl_l."SNAPTIME" AS "SNAPREPL_SNAPTIME", COUNT(*) AS "SNAPREPL_N" FROM "sales"."RLOG_orders" snaprepl_l WHERE snaprepl_l."SNAPTIME" >= '2026-01-02 03:04:05.678000' GROUP BY snaprepl_l."SNAPTIME";

SELECT b."SNAPREPL_BATCH", CASE WHEN c."SNAPREPL_PRESENT" IS NOT NULL THEN 'U' ELSE 'D' END AS "SNAPREPL_OP", c."SNAPREPL_ROWGUID", c."SNAPREPL_SNAPTIME", c."SNAPREPL_K0" AS "order_id", c."SNAPREPL_K1" AS "line_no", c."amount" AS "amount", NULL AS "gone" FROM (SELECT snaprepl_l."RLOG_order_id" AS "SNAPREPL_K0", snaprepl_l."RLOG_line_no" AS "SNAPREPL_K1", snaprepl_l."SNAPTIME" AS "SNAPREPL_SNAPTIME", snaprepl_l."RLOG_ROWGUID" AS "SNAPREPL_ROWGUID", snaprepl_s."SNAPREPL_PRESENT", snaprepl_s."order_id", snaprepl_s."line_no", snaprepl_s."amount" FROM "sales"."RLOG_orders" snaprepl_l LEFT JOIN (SELECT 1 AS "SNAPREPL_PRESENT", "order_id", "line_no", "amount" FROM "sales"."orders") snaprepl_s ON snaprepl_s."order_id" = snaprepl_l."RLOG_order_id" AND snaprepl_s."line_no" = snaprepl_l."RLOG_line_no" WHERE snaprepl_l."SNAPTIME" >= '2026-01-02 03:04:05.678000') c JOIN (SELECT g."SNAPREPL_SNAPTIME", CAST(FLOOR((SUM(g."SNAPREPL_N") OVER (ORDER BY g."SNAPREPL_SNAPTIME") - g."SNAPREPL_N") / 500) AS integer) AS "SNAPREPL_BATCH" FROM (SELECT snaprepl_l."SNAPTIME" AS "SNAPREPL_SNAPTIME", COUNT(*) AS "SNAPREPL_N" FROM "sales"."RLOG_orders" snaprepl_l WHERE snaprepl_l."SNAPTIME" >= '2026-01-02 03:04:05.678000' GROUP BY snaprepl_l."SNAPTIME") g) b ON b."SNAPREPL_SNAPTIME" = c."SNAPREPL_SNAPTIME";

