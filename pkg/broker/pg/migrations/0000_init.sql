CREATE SEQUENCE "public"."berth_conversations_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1;--> statement-breakpoint
CREATE SEQUENCE "public"."berth_events_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1;--> statement-breakpoint
CREATE SEQUENCE "public"."berth_messages_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1;--> statement-breakpoint
CREATE SEQUENCE "public"."berth_sessions_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1;--> statement-breakpoint
CREATE TABLE "berth_events" (
	"seq" bigint PRIMARY KEY NOT NULL,
	"query_id" text NOT NULL,
	"session_id" text NOT NULL,
	"reason" text NOT NULL,
	"event_type" text NOT NULL,
	"timestamp" timestamp with time zone NOT NULL,
	"data" jsonb NOT NULL,
	"json" text NOT NULL,
	"expires_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "berth_conversations" (
	"id" text PRIMARY KEY NOT NULL,
	"seq" bigint NOT NULL,
	"created_at" timestamp with time zone NOT NULL,
	"last_activity" timestamp with time zone NOT NULL,
	"message_count" bigint DEFAULT 0 NOT NULL
);
--> statement-breakpoint
CREATE TABLE "berth_message_counts" (
	"conversation_id" text NOT NULL,
	"query_id" text NOT NULL,
	"n" bigint DEFAULT 0 NOT NULL,
	CONSTRAINT "berth_message_counts_conversation_id_query_id_pk" PRIMARY KEY("conversation_id","query_id")
);
--> statement-breakpoint
CREATE TABLE "berth_messages" (
	"seq" bigint PRIMARY KEY NOT NULL,
	"conversation_id" text NOT NULL,
	"query_id" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"expires_at" timestamp with time zone NOT NULL,
	"json" text NOT NULL
);
--> statement-breakpoint
CREATE TABLE "berth_counters" (
	"key" text NOT NULL,
	"shard" smallint NOT NULL,
	"n" bigint DEFAULT 0 NOT NULL,
	CONSTRAINT "berth_counters_key_shard_pk" PRIMARY KEY("key","shard")
);
--> statement-breakpoint
CREATE TABLE "berth_sessions" (
	"session_id" text PRIMARY KEY NOT NULL,
	"seq" bigint NOT NULL,
	"name" text DEFAULT '' NOT NULL,
	"status" text DEFAULT 'idle' NOT NULL,
	"created_at" timestamp with time zone NOT NULL,
	"updated_at" timestamp with time zone NOT NULL,
	"first_activity" timestamp with time zone NOT NULL,
	"last_activity" timestamp with time zone NOT NULL,
	"query_count" integer DEFAULT 0 NOT NULL,
	"message_count" integer DEFAULT 0 NOT NULL,
	"event_count" integer DEFAULT 0 NOT NULL,
	"error_count" integer DEFAULT 0 NOT NULL,
	"conversation_count" integer DEFAULT 0 NOT NULL,
	"queries" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"conversations" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"expires_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
ALTER TABLE "berth_message_counts" ADD CONSTRAINT "berth_message_counts_conversation_id_berth_conversations_id_fk" FOREIGN KEY ("conversation_id") REFERENCES "public"."berth_conversations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "berth_messages" ADD CONSTRAINT "berth_messages_conversation_id_berth_conversations_id_fk" FOREIGN KEY ("conversation_id") REFERENCES "public"."berth_conversations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "berth_events_query_idx" ON "berth_events" USING btree ("query_id","seq");--> statement-breakpoint
CREATE INDEX "berth_events_session_idx" ON "berth_events" USING btree ("session_id","seq");--> statement-breakpoint
CREATE INDEX "berth_events_expires_idx" ON "berth_events" USING btree ("expires_at");--> statement-breakpoint
CREATE UNIQUE INDEX "berth_conversations_seq_idx" ON "berth_conversations" USING btree ("seq");--> statement-breakpoint
CREATE INDEX "berth_message_counts_query_idx" ON "berth_message_counts" USING btree ("query_id") WHERE n > 0;--> statement-breakpoint
CREATE INDEX "berth_messages_conversation_idx" ON "berth_messages" USING btree ("conversation_id","seq");--> statement-breakpoint
CREATE INDEX "berth_messages_query_idx" ON "berth_messages" USING btree ("query_id","seq");--> statement-breakpoint
CREATE INDEX "berth_messages_expires_idx" ON "berth_messages" USING btree ("expires_at");--> statement-breakpoint
CREATE UNIQUE INDEX "berth_sessions_seq_idx" ON "berth_sessions" USING btree ("seq");--> statement-breakpoint
CREATE INDEX "berth_sessions_last_activity_idx" ON "berth_sessions" USING btree ("last_activity");--> statement-breakpoint
CREATE INDEX "berth_sessions_expires_idx" ON "berth_sessions" USING btree ("expires_at");