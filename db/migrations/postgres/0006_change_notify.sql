-- +goose Up
-- Replicas cache agents, Brands and signing keys. Every change to those
-- tables, made by any replica (or by hand), is announced on the channel
-- pactd_changes as "<table>:<key>", so every listening replica drops its
-- cached copy at once; the caches' short lifetimes remain the bound when a
-- listener is disconnected. SQLite needs none of this: it serves one process.
CREATE FUNCTION pactd_notify_change() RETURNS trigger AS $$
DECLARE
  k TEXT;
BEGIN
  IF TG_TABLE_NAME = 'agents' THEN
    k := COALESCE(NEW.issuer, OLD.issuer);
    IF TG_OP = 'UPDATE' AND OLD.issuer <> NEW.issuer THEN
      PERFORM pg_notify('pactd_changes', 'agents:' || OLD.issuer);
    END IF;
  ELSIF TG_TABLE_NAME = 'brands' THEN
    k := COALESCE(NEW.id, OLD.id);
  ELSE
    k := COALESCE(NEW.kid, OLD.kid);
  END IF;
  PERFORM pg_notify('pactd_changes', TG_TABLE_NAME || ':' || k);
  RETURN NULL;
END;
$$ LANGUAGE plpgsql;

CREATE TRIGGER agents_notify_change AFTER INSERT OR UPDATE OR DELETE ON agents
  FOR EACH ROW EXECUTE FUNCTION pactd_notify_change();
CREATE TRIGGER brands_notify_change AFTER INSERT OR UPDATE OR DELETE ON brands
  FOR EACH ROW EXECUTE FUNCTION pactd_notify_change();
CREATE TRIGGER signing_keys_notify_change AFTER INSERT OR UPDATE OR DELETE ON signing_keys
  FOR EACH ROW EXECUTE FUNCTION pactd_notify_change();

-- +goose Down
DROP TRIGGER signing_keys_notify_change ON signing_keys;
DROP TRIGGER brands_notify_change ON brands;
DROP TRIGGER agents_notify_change ON agents;
DROP FUNCTION pactd_notify_change();
