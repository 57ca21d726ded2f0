"""Random vectors (384 floats) for every observation and summary of a
store, model `stand-in`, for latency_meaning.py. Needs apsw.

  python3 vectors.py STORE/data/mnemo.db"""
import apsw, array, random, sys
random.seed(7)
c = apsw.Connection(sys.argv[1])
c.execute("PRAGMA journal_mode=OFF"); c.execute("BEGIN")
def vec():
    return array.array('f', [random.random() - 0.5 for _ in range(384)]).tobytes()
for kind, table in [("observation", "observations"), ("summary", "summaries")]:
    ids = [r[0] for r in c.execute(f"SELECT id FROM {table}")]
    for i in ids:
        c.execute("INSERT INTO embeddings (kind, record_id, model, dim, vector, content_hash, created_at) VALUES (?,?,?,?,?,?,0)", (kind, i, "stand-in", 384, vec(), "x"))
c.execute("COMMIT"); c.execute("PRAGMA journal_mode=WAL")
print(c.execute("SELECT count(*) FROM embeddings").fetchone())
