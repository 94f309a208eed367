-- Custom SQL migration file, put your code below! --
-- A version of the messages table: every committed statement that changed it adds 1 to counter
-- 'messages_version' (sharded like every counter, so writers never wait on one row). The broker's
-- page cache (pkg/broker/pg/page-cache.ts) serves a page again only while this sum is unchanged.
-- Triggers, not application code, so no write path — a purge, a cascade from a conversation, the
-- reaper, an operator's psql — can change the table without moving the version.
CREATE FUNCTION berth_bump_version() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'DELETE' THEN
    -- The reaper deletes nothing most of the time: that must not look like a change.
    PERFORM 1 FROM berth_gone LIMIT 1;
    IF NOT FOUND THEN RETURN NULL; END IF;
  END IF;
  INSERT INTO berth_counters AS k (key, shard, n)
  VALUES (TG_ARGV[0], ((CASE WHEN TG_OP = 'INSERT' THEN 0 ELSE 16 END) + pg_backend_pid() % 16)::smallint, 1)
  ON CONFLICT (key, shard) DO UPDATE SET n = k.n + 1;
  RETURN NULL;
END $$;
--> statement-breakpoint
CREATE TRIGGER berth_messages_version_ins AFTER INSERT OR UPDATE OR TRUNCATE ON berth_messages
  FOR EACH STATEMENT EXECUTE FUNCTION berth_bump_version('messages_version');
--> statement-breakpoint
CREATE TRIGGER berth_messages_version_del AFTER DELETE ON berth_messages
  REFERENCING OLD TABLE AS berth_gone
  FOR EACH STATEMENT EXECUTE FUNCTION berth_bump_version('messages_version');
