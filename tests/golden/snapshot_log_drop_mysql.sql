DELIMITER $$

DROP TRIGGER IF EXISTS `sales`.`sales_orders_I_log` $$

DROP TRIGGER IF EXISTS `sales`.`sales_orders_U_log` $$

DROP TRIGGER IF EXISTS `sales`.`sales_orders_D_log` $$

DROP TABLE IF EXISTS `sales`.`RLOG_orders` $$

DELIMITER ;
