DROP INDEX "berth_sessions_last_activity_idx";--> statement-breakpoint
CREATE INDEX "berth_sessions_name_idx" ON "berth_sessions" USING btree ("name_key" COLLATE "C","seq");--> statement-breakpoint
CREATE INDEX "berth_sessions_conversations_idx" ON "berth_sessions" USING btree ("conversation_count","seq");--> statement-breakpoint
CREATE INDEX "berth_sessions_last_activity_idx" ON "berth_sessions" USING btree ("last_activity","seq");