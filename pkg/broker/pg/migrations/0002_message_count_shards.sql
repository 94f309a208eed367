DROP INDEX "berth_message_counts_query_idx";--> statement-breakpoint
ALTER TABLE "berth_message_counts" DROP CONSTRAINT "berth_message_counts_conversation_id_query_id_pk";--> statement-breakpoint
ALTER TABLE "berth_message_counts" ADD COLUMN "shard" smallint DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "berth_message_counts" ADD CONSTRAINT "berth_message_counts_conversation_id_query_id_shard_pk" PRIMARY KEY("conversation_id","query_id","shard");--> statement-breakpoint
CREATE INDEX "berth_message_counts_query_idx" ON "berth_message_counts" USING btree ("query_id");--> statement-breakpoint
ALTER TABLE "berth_conversations" DROP COLUMN "message_count";
