"""Copies a replayed store's records into a large store: each observation
N times, each summary and prompt M times, one hour later per copy (newer
copies get higher ids); then rebuilds the word indexes. Needs apsw (a
SQLite new enough for the store's FTS5 format)."""
import apsw, shutil, sys
src, dst, n_obs, n_sum = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
shutil.copy(src, dst)
c = apsw.Connection(dst)
c.execute("PRAGMA journal_mode=OFF"); c.execute("PRAGMA synchronous=OFF")
HOUR = 3600000
def copy(table, times):
    cs = [r[1] for r in c.execute(f"PRAGMA table_info({table})") if r[1] != 'id']
    sel = []
    for x in cs:
        if x == 'uid': sel.append("uid || '-c' || k.k")
        elif x == 'created_at': sel.append(f"created_at + k.k * {HOUR}")
        elif x == 'superseded_by': sel.append("NULL")
        elif x == 'session_id': sel.append('session_id + k.k * 1000')
        else: sel.append(x)
    base = c.execute(f"SELECT max(id) FROM {table}").fetchone()[0]
    c.execute(f"""WITH RECURSIVE k(k) AS (SELECT 1 UNION ALL SELECT k+1 FROM k WHERE k < {times-1})
      INSERT INTO {table} ({', '.join(cs)}) SELECT {', '.join(sel)} FROM {table}, k WHERE {table}.id <= {base}
      ORDER BY k.k ASC, {table}.id""")
c.execute("BEGIN")
# Each copy is its own set of sessions (a session of a real store holds
# tens of records, not tens of thousands).
scols = [r[1] for r in c.execute("PRAGMA table_info(sessions)")]
ssel = []
for x in scols:
    if x == 'id': ssel.append('id + k.k * 1000')
    elif x == 'platform_session_id': ssel.append("platform_session_id || '-c' || k.k")
    elif x in ('started_at', 'updated_at', 'ended_at'): ssel.append(f"{x} + k.k * {HOUR}")
    elif x == 'continues': ssel.append('continues + k.k * 1000')
    else: ssel.append(x)
c.execute(f"""WITH RECURSIVE k(k) AS (SELECT 1 UNION ALL SELECT k+1 FROM k WHERE k < {n_obs-1})
  INSERT INTO sessions ({', '.join(scols)}) SELECT {', '.join(ssel)} FROM sessions, k WHERE sessions.id < 1000""")
for t, times in [("observations", n_obs), ("summaries", n_sum), ("prompts", n_sum)]:
    if times > 1:
        copy(t, times)
for fts in ["observations_fts", "summaries_fts", "prompts_fts"]:
    c.execute(f"INSERT INTO {fts}({fts}) VALUES('rebuild')")
c.execute("COMMIT")
for t in ["observations", "summaries", "prompts", "sessions", "projects"]:
    print(t, c.execute(f"SELECT count(*) FROM {t}").fetchone()[0])
c.execute("PRAGMA journal_mode=WAL")
c.close()
