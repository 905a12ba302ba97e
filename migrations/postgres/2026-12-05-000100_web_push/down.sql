DROP INDEX webhook_deliveries_subscription;
DELETE FROM webhook_deliveries WHERE channel = 'push';
ALTER TABLE webhook_deliveries DROP COLUMN subscription_id;
DROP TABLE push_settings;
DROP TABLE push_subscriptions;
