"""The derived index of one store, ``<store>/index.sqlite3``: the JSONL files' fold, tallies,
evidence, counts and BM25 documents in SQLite tables, caught up from the offset it last read.
A query is scored here as a full read scores it (``scored``): FTS5 (or a scan of the
documents) finds the cards holding a term that could lift them to the floor, and each one's
document gives its BM25 (``search.score``) over the listed cards' term counts, kept here.

Invariants: the JSONL files stay the truth and every answer equals a full read; a replaced,
shrunk or rewritten file, or a missing, corrupt or older index, means a silent rebuild; a
catch-up is one write transaction. Must not import catalog, review, advice or cli.
"""

import heapq
import os
from collections import Counter
from typing import Callable, Dict, Iterable, List, Optional, Sequence, Tuple

try:
    import sqlite3
except ImportError:  # pragma: no cover - some minimal Python builds leave it out
    sqlite3 = None

from ..learning import lifecycle
from ..storage import content, errors, fastjson, model, store, text, verdicts
from ..storage import posixfs as fs
from ..storage.memo import Memo
from ..storage.record import dedup_key
from . import apart, score, search, topk

SCHEMA = 12  # bump whenever what is derived changes (tables, tokenizer, weights): a rebuild follows
VERSION = SCHEMA * 1000 + verdicts.RULES  # ``user_version``: new screen rules rebuild it too
FILE = "index.sqlite3"
FTS = True               # use FTS5 where the build has it (tests turn it off to cover the scan)
NAMES = ("signals", "cards", "recs", "events", "surfacings")  # signals first: cards score from them
CHUNK = 2 << 20          # bytes read and applied at a time, so a rebuild's memory stays bounded
RECENT = 10              # INDEX.md's "Recent activity" rows kept per file
LABELS = {"events": "event", "cards": "card", "recs": "rec", "signals": "signal"}
TIMEOUT = store.LOCK_WAIT  # seconds to wait for another writer; then the full read serves
# The order lessons are screened in ahead of need (what advice may say first, newest first);
# a partial index keeps it, so finding the next ones to screen costs no scan.
JUDGE_RANK = {"accepted": 0, "proposed": 1, "candidate": 2}
JUDGE_ORDER = ("CASE status WHEN 'accepted' THEN 0 WHEN 'proposed' THEN 1 "
               "WHEN 'candidate' THEN 2 ELSE 3 END")
UNJUDGED = ("FROM cards INDEXED BY cards_unjudged WHERE listed = 1 AND sok = 0 AND "
            "verdict IS NULL")

# ``files.mtime`` holds the inode change time (``st_ctime_ns``) of what was read, not the
# modification time: a restore can set the latter back after an in-place edit
_TABLES = """
CREATE TABLE files(name TEXT PRIMARY KEY, dev INTEGER, ino INTEGER, offset INTEGER,
                   lines INTEGER, records INTEGER, head BLOB, open_tail INTEGER, mtime INTEGER);
CREATE TABLE problems(name TEXT, line INTEGER, reason TEXT, raw BLOB);
CREATE TABLE cards(rid INTEGER PRIMARY KEY, id TEXT UNIQUE NOT NULL, ts TEXT,
                   status TEXT, skill TEXT, scope TEXT, raw_status TEXT, origin TEXT,
                   tags TEXT, dkey TEXT, score INTEGER, ready INTEGER, doclen REAL,
                   pool INTEGER, listed INTEGER, base REAL, first TEXT, last_seen TEXT,
                   least INTEGER, sdigest TEXT, sok INTEGER, verdict INTEGER, rankkey REAL,
                   expires REAL);
CREATE TABLE cardwide(rid INTEGER PRIMARY KEY, data TEXT);
CREATE TABLE carddoc(rid INTEGER PRIMARY KEY, doc TEXT);
CREATE VIEW cardsx AS SELECT cards.*, cardwide.data FROM cards JOIN cardwide
    ON cardwide.rid = cards.rid;
CREATE INDEX cards_rank ON cards(score DESC, ts DESC, rid);
CREATE INDEX cards_dkey ON cards(dkey);
CREATE INDEX cards_ready ON cards(ready, score DESC, ts DESC, rid, status);
CREATE INDEX cards_status_rank ON cards(status, score DESC, ts DESC, rid);
CREATE INDEX cards_key ON cards(rankkey, raw_status, expires) WHERE rankkey IS NOT NULL;
CREATE TABLE termdf(term TEXT PRIMARY KEY, n INTEGER) WITHOUT ROWID;
CREATE INDEX cards_sdigest ON cards(sdigest);
CREATE INDEX cards_unjudged ON cards({JUDGE_ORDER}, rid DESC)
    WHERE listed = 1 AND sok = 0 AND verdict IS NULL;
CREATE INDEX cards_held ON cards(rid) WHERE listed = 1 AND sok = 0 AND verdict = 1;
CREATE TABLE recs(rid INTEGER PRIMARY KEY, id TEXT UNIQUE NOT NULL, data TEXT, dkey TEXT);
CREATE INDEX recs_dkey ON recs(dkey);
CREATE TABLE tally(target TEXT, what TEXT, n INTEGER, PRIMARY KEY(target, what)) WITHOUT ROWID;
CREATE TABLE evidence(id TEXT PRIMARY KEY, used INTEGER, helped INTEGER, violated INTEGER,
                      last TEXT, last_violation TEXT) WITHOUT ROWID;
CREATE TABLE maxima(name TEXT PRIMARY KEY, n INTEGER) WITHOUT ROWID;
CREATE TABLE touched(id TEXT PRIMARY KEY, ts TEXT) WITHOUT ROWID;
CREATE TABLE stamps(name TEXT, exact INTEGER, hour TEXT, n INTEGER, rest TEXT,
                    PRIMARY KEY(name, exact, hour)) WITHOUT ROWID;
CREATE TABLE recent(name TEXT, ts TEXT, what TEXT);
CREATE TABLE surfaced(id TEXT PRIMARY KEY, n INTEGER) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS verdicts(digest TEXT PRIMARY KEY, held INTEGER, reasons TEXT)
    WITHOUT ROWID;
""".replace("{JUDGE_ORDER}", JUDGE_ORDER)
# Which cards name a term, where SQLite has FTS5 (a contentless table of each card's terms,
# presence only: the frequencies stay in ``carddoc``); without it, documents are scanned.
_TERMS = ("CREATE VIRTUAL TABLE IF NOT EXISTS cardterms USING fts5(terms, content='', "
          "detail=none, columnsize=0)")
_INDEXES = [(statement.split()[2], statement.strip()) for statement in _TABLES.split(";")
            if statement.strip().startswith("CREATE INDEX")]  # (name, statement)
_DROP = ("files", "problems", "cards", "cardwide", "carddoc", "recs", "tally", "evidence", "touched",
         "stamps", "recent", "surfaced", "termdf", "maxima")
# ``verdicts`` (the safety screen's, by content digest) outlives a rebuild: it depends on a
# card's content and the screen's rules alone, and judging everything again is slow.
_KEPT = ("verdicts",)
# ``termdf`` keeps how many listed cards (not hidden) hold each term, and ``maxima`` their count
# and total length (``list_n``, ``list_length``): BM25's idf and average length, kept as cards
# come and go, for every query. The cards advice may surface (its ``pool``): accepted and
# candidate ones, and proposed ones a person or agent recorded (advice.STATUS_WEIGHT names the
# same statuses).
POOL_STATUSES = ("accepted", "proposed", "candidate")
PROPOSED_ORIGINS = ("agent", "human")


HOUR = 13       # characters of an ISO stamp up to its hour: line counts are kept per hour
_SEP = "\x1f"    # between the rest of each stamp of one hour (a stamp holding it is exact)


def stamp_key(ts: str) -> Tuple[int, str, str]:
    """Where a line's stamp is counted: (0, first ``HOUR`` characters, the rest) for the
    hour's row, or (1, the stamp, "") for a row of its own. Exact either way, since two
    strings of at least ``HOUR`` characters order as their prefixes do, or as the whole
    strings when the prefixes are equal."""
    if len(ts) < HOUR or _SEP in ts:
        return 1, ts, ""
    return 0, ts[:HOUR], ts[HOUR:]


def judge_order(cards: Iterable[dict]) -> List[dict]:
    """The listed cards in fold order, reordered as lessons are screened ahead of need:
    what advice may say first, newest first (``JUDGE_ORDER`` over the index)."""
    listed = [c for c in cards if c.get("status", "proposed") not in model.HIDDEN_STATUSES]

    def rank(i: int):
        status = listed[i].get("status", "proposed")
        return JUDGE_RANK.get(status, 3) if isinstance(status, str) else 3, -i
    return [listed[i] for i in sorted(range(len(listed)), key=rank)]


def surfaceable(card: dict) -> bool:
    if card.get("_imported"):  # as advice's ``_eligible`` (a tracked store has no index)
        return False
    status = card.get("status", "proposed")
    if status == "proposed":
        return card.get("origin", "agent") in PROPOSED_ORIGINS
    return isinstance(status, str) and status in POOL_STATUSES


class Known:
    """Existing cards and recommendations for ``record``, looked up in the index."""

    def __init__(self, index: "Index"):
        self.index = index

    def get(self, name: str, rid: str) -> Optional[dict]:
        return self.index.record(name, rid)

    def by_key(self, name: str, key: str) -> Optional[dict]:
        return self.index.by_key(name, key)


class _Titled:
    """``LineCheck.titled`` over the index: an id whose first line (with its title) was
    read in an earlier catch-up is in the fold already."""

    def __init__(self, db, table: str, new: set):
        self.db, self.table, self.new = db, table, new

    def __contains__(self, rid) -> bool:
        return rid in self.new or self.db.execute(
            f"SELECT 1 FROM {self.table} WHERE id=?", (rid,)).fetchone() is not None

    def add(self, rid) -> None:
        self.new.add(rid)


class Unusable(Exception):
    """A store file the index cannot follow (not a regular file): the full read decides."""


class Rebuild(Exception):
    """A source file no longer continues what the index read: start over."""


def enabled() -> bool:
    return sqlite3 is not None and sqlite3.sqlite_version_info >= (3, 35) and \
        os.environ.get("SELF_LEARNING_INDEX", "").strip().lower() not in ("off", "0", "no")


def of(memory) -> Optional["Index"]:
    """The index of ``memory``'s store, opened once per command and caught up on each call
    (so a command that wrote reads its own lines); None when the full read must serve."""
    ix = memory.__dict__.get("_index")
    if ix is None:
        ix = open_index(memory)
        memory.__dict__["_index"] = ix if ix is not None else False  # False: not again
    elif ix and ix.db is not None:
        ix.refresh()
    return ix or None


def of_stores(stores) -> Optional["Index"]:
    """The index when ``stores`` is the project store alone (merging a global one or
    teammates' cards reads in full)."""
    alone = stores.global_ is None and not getattr(stores, "teammates", None)
    return of(stores.project) if alone else None


def path_of(memory) -> str:
    return os.path.join(memory.root, FILE)


def open_index(memory) -> Optional["Index"]:
    """The store's index, caught up with its files; None without sqlite3 or a store folder,
    and for a store git tracks (its cards' provenance comes from the full read)."""
    root = getattr(memory, "root", None)  # a stand-in without a folder reads in full
    if not enabled() or not isinstance(root, str) or not os.path.isdir(root):
        return None
    imported = getattr(memory, "imported", None)
    if imported is not None and imported():  # a store git tracks: provenance needs the full read
        return None
    for attempt in (1, 2):
        try:
            return Index(memory)
        except (Unusable, sqlite3.OperationalError, OSError, errors.LinkedPath):
            return None  # locked too long, a full disk, a folder for a file: the full read serves
        except sqlite3.DatabaseError:  # corrupt beyond what the first open noticed
            if attempt == 2:
                return None
            _remove(path_of(memory))
    return None


def _private(db_path: str) -> None:
    """The index and its -wal/-shm files are 0600 like every store file, whatever the umask
    (created empty here first: SQLite gives its -wal and -shm the database file's mode)."""
    for suffix in ("-journal", "-wal", "-shm", ""):
        store.guard(db_path + suffix)  # SQLite opens these itself, following links
    for suffix in ("", "-wal", "-shm"):
        try:
            fd = os.open(db_path + suffix, os.O_RDWR | os.O_NOFOLLOW |
                         (os.O_CREAT if not suffix else 0), fs.PRIVATE_FILE)
        except FileNotFoundError:
            continue
        try:
            if os.fstat(fd).st_mode & 0o777 != fs.PRIVATE_FILE:
                os.fchmod(fd, fs.PRIVATE_FILE)
        finally:
            os.close(fd)


def _remove(db_path: str) -> None:
    for suffix in ("", "-wal", "-shm", "-journal", apart.SUFFIX):
        try:
            os.unlink(db_path + suffix)
        except FileNotFoundError:
            pass


def _text(value, default: str = "") -> Optional[str]:
    """A column value for a view field: the string itself, None for anything else."""
    return value if isinstance(value, str) else None


def public(record: dict) -> dict:
    """A folded record without bookkeeping keys, with its defaults and origin (as list shows it)."""
    out = {k: v for k, v in record.items() if not k.startswith("_")}
    out.setdefault("status", "proposed")
    out.setdefault("primary_skill", "unknown")
    out.setdefault("scope", "project")
    out["store"] = record.get("_store", "project")
    if record.get("_tracked"):  # a store git tracks: its provenance is imported
        out["provenance"] = "imported" if record.get("_imported") else "imported, accepted here"
    if record.get("_owner"):  # a teammate's committed store
        out["owner"] = record["_owner"]
    out["created"] = record.get("_first_ts") or record.get("ts", "")
    out["versions"] = record.get("_versions", 1)
    return out


merge = store.merge  # one line folded onto the version before it


class Index:
    """An open, caught-up index; reads run in one snapshot until ``close``."""

    def __init__(self, memory):
        self.memory = memory
        self.path = path_of(memory)
        self.db = self._connect()
        try:
            self._ensure_schema()
            self.fts = self.db.execute("SELECT 1 FROM sqlite_master WHERE name = 'cardterms'"
                                       ).fetchone() is not None
            if self.fts:  # built by a Python whose SQLite has FTS5: this one must have it too
                self.db.execute("SELECT 1 FROM cardterms WHERE cardterms MATCH 'a' LIMIT 0")
            self.catch_up()
        except Exception:
            self.db.close()
            raise
        self.db.execute("BEGIN")  # one read snapshot for everything this command asks

    # --- opening ---------------------------------------------------------------------------

    def _connect(self):
        _private(self.path)
        db = sqlite3.connect(self.path, timeout=TIMEOUT, isolation_level=None)
        db.execute("PRAGMA synchronous=NORMAL")
        db.execute("PRAGMA cache_size=-16384")  # 16 MiB of pages: a rebuild stays under 200 MB
        db.execute("PRAGMA temp_store=MEMORY")  # sorts of ranked rows stay off the disk
        return db

    def _ensure_schema(self) -> None:
        try:
            version = self.db.execute("PRAGMA user_version").fetchone()[0]
            if version == VERSION and self._intact():
                return
        except sqlite3.DatabaseError:
            self.db.close()
            _remove(self.path)
            self.db = self._connect()
        try:
            if self.db.execute("PRAGMA page_count").fetchone()[0] == 0:
                self.db.execute("PRAGMA page_size=16384")  # whole card rows fit a page
            self.db.execute("PRAGMA journal_mode=WAL")
        except sqlite3.OperationalError:  # another process holds it; it sets WAL too
            pass
        self.db.execute("BEGIN IMMEDIATE")
        try:
            if self.db.execute("PRAGMA user_version").fetchone()[0] != VERSION or \
                    not self._intact():
                self._create()
            self.db.execute("COMMIT")
        except BaseException:
            if self.db.in_transaction:
                self.db.execute("ROLLBACK")
            raise

    def _intact(self) -> bool:
        names = {r[0] for r in self.db.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        return names.issuperset(_DROP + _KEPT)

    def _create(self) -> None:
        """Start over: every table and view goes, those an older schema had too."""
        self.db.execute("DROP TABLE IF EXISTS cardterms")  # and its shadow tables
        for kind, name in self.db.execute("SELECT type, name FROM sqlite_master WHERE type IN "
                                          "('table', 'view') AND name NOT LIKE 'sqlite%'"
                                          ).fetchall():
            self.db.execute(f'DROP {kind.upper()} IF EXISTS "{name}"')
        for statement in _TABLES.split(";"):
            if statement.strip():
                self.db.execute(statement)
        if FTS:
            try:
                self.db.execute(_TERMS)
            except sqlite3.OperationalError:  # a build without FTS5: documents are scanned
                pass
        self.db.execute(f"PRAGMA user_version={VERSION}")

    def close(self) -> None:
        try:
            self.db.execute("COMMIT")
        except sqlite3.Error:
            pass
        self.db.close()
        self.db = None

    def refresh(self) -> None:
        """Catch up with lines appended since this snapshot began, and start a new snapshot."""
        self.db.execute("COMMIT")
        self.catch_up()
        self.db.execute("BEGIN")

    # --- catching up -----------------------------------------------------------------------

    def _stale(self) -> bool:
        """Whether any file has bytes the index has not read (or is no longer what it read)."""
        known = {r[0]: r[1:] for r in self.db.execute(
            "SELECT name, dev, ino, offset, mtime FROM files")}
        for name in NAMES:
            st = _stat(self.memory.path(name))
            row = known.get(name)
            if st is None:
                if row and row[2]:
                    return True
                continue
            if row is None or (st.st_dev, st.st_ino) != row[:2] or st.st_size != row[2] \
                    or st.st_ctime_ns != row[3]:
                return True
        return False

    def catch_up(self) -> None:
        """Apply what was appended since the last catch-up; rebuild when a file was replaced."""
        if not self._stale():
            return
        self.db.execute("BEGIN IMMEDIATE")  # one writer at a time; readers keep their snapshot
        try:
            try:
                if self.db.execute("SELECT 1 FROM files LIMIT 1").fetchone() is None:
                    raise Rebuild("nothing read yet")
                _Apply(self).run(rebuild=False)
            except Rebuild:
                self._rebuild()
                rebuilt = True
            else:
                rebuilt = False
            self.db.execute("COMMIT")
        except BaseException:
            if self.db.in_transaction:
                self.db.execute("ROLLBACK")
            apart.detach(self.db)
            raise
        if rebuilt:
            apart.detach(self.db)
            self._empty_wal()

    def _empty_wal(self) -> None:
        """Move a rebuild's pages into the database now and empty the write-ahead log: a
        hook ends with ``_exit`` (no close, which would do it), and every later opener would
        otherwise read hundreds of MB of log to recover. Readers still on an older snapshot
        leave it for the next close (SQLite's own checkpoints): this never waits for them."""
        self.db.execute("PRAGMA busy_timeout=0")  # never wait for a reader: it is a courtesy
        try:
            self.db.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchall()
        except sqlite3.OperationalError:
            pass
        finally:
            self.db.execute(f"PRAGMA busy_timeout={int(TIMEOUT * 1000)}")

    def _rebuild(self) -> None:
        """Derive everything again, without the secondary indexes while rows go in: building
        an index once from sorted rows costs far less than keeping it up row by row."""
        for table in _DROP:
            self.db.execute(f"DELETE FROM {table}")
        if self.db.execute("SELECT 1 FROM sqlite_master WHERE name = 'cardterms'").fetchone():
            self.db.execute("INSERT INTO cardterms(cardterms) VALUES ('delete-all')")
        for name, _ in _INDEXES:
            self.db.execute(f"DROP INDEX IF EXISTS {name}")
        _Apply(self).run(rebuild=True)
        for _, statement in _INDEXES:
            self.db.execute(statement)

    # --- problems ----------------------------------------------------------------------------

    def check(self, names: Iterable[str], wanted: Optional[Callable[[bytes], bool]] = None) -> None:
        """What a full read of ``names`` would say: warnings for the lines it skips (those
        ``wanted`` accepts), and, unless the memory is tolerant, the refusal of a line from
        a newer format."""
        for name in names:
            rows = self.db.execute("SELECT line, reason, raw FROM problems WHERE name=? "
                                   "ORDER BY line", (name,)).fetchall()
            tail = self._tail_problem(name)
            for line, reason, raw in rows + ([tail] if tail else []):
                if wanted is not None and not wanted(bytes(raw)):
                    continue
                if reason.startswith(store.NEWER) and not getattr(self.memory, "tolerant", False):
                    from ..storage.errors import SelfLearningError
                    raise SelfLearningError(f"{self.memory.path(name)}:{line}: {reason}")
                self.memory.warn(name, line, reason)

    def _tail_problem(self, name: str):
        """A last line without its newline that does not parse (a writer died mid-line)."""
        row = self.db.execute("SELECT offset, lines FROM files WHERE name=?", (name,)).fetchone()
        offset, lines = row if row else (0, 0)
        try:
            with open(self.memory.path(name), "rb") as fh:
                fh.seek(offset)
                rest = fh.read()
        except FileNotFoundError:
            return None
        if not rest.strip() or b"\n" in rest:
            return None
        return lines + 1, "torn last line (no newline)", rest

    # --- reading -----------------------------------------------------------------------------

    def _folded(self, data: str) -> dict:
        record = fastjson.loads(data)
        record["_store"] = self.memory.origin
        return record

    def record(self, kind: str, rid: str) -> Optional[dict]:
        """The folded card (``kind`` cards) or recommendation (recs) with this id."""
        row = self.db.execute(f"SELECT data FROM {_wide(kind)} WHERE id=?", (rid,)).fetchone()
        return self._folded(row[0]) if row else None

    def by_key(self, kind: str, key: str) -> Optional[dict]:
        """The record ``record.dedup_key`` maps ``key`` to (the last in fold order)."""
        row = self.db.execute(f"SELECT data FROM {_wide(kind)} WHERE dkey=? ORDER BY rid DESC "
                              "LIMIT 1",
                              (key,)).fetchone()
        return self._folded(row[0]) if row else None

    def records(self, kind: str, where: str = "", params=(), order: str = "rid",
                limit: int = -1) -> List[dict]:
        sql = f"SELECT data FROM {_wide(kind)}" + (f" WHERE {where}" if where else "") + \
            f" ORDER BY {order} LIMIT ?"
        return [self._folded(r[0]) for r in self.db.execute(sql, (*params, limit))]

    def pool(self) -> Tuple[int, int]:
        """How many cards are listed (not hidden), and their documents' total length (kept as
        cards come and go, not counted)."""
        kept = dict(self.db.execute("SELECT name, n FROM maxima WHERE name IN (?, ?)",
                                    ("list_n", "list_length")))
        return kept.get("list_n", 0), kept.get("list_length", 0)

    def scored(self, terms: List[str], columns: str, source: str, where: str,
               params: Sequence = ()) -> Tuple[List[tuple], int]:
        """``(score, *columns)`` of the cards of ``source`` (``FROM`` over ``cards c``) that
        ``where`` keeps and that could answer the query of ``terms`` (``search.kept``), scored
        as ``search.bm25`` scores them over the listed cards; and how many are listed.

        Only cards holding one of the query's specific words (``search.specific``: few cards
        hold each) and one of the terms ``search.needed`` names are read: any other card
        scores 0 or below what a card kept needs. None at all when no word is specific or
        even every term together could not reach the floor (a query of words most cards
        hold: a long prompt in a big store of repetitive text costs nothing)."""
        n, total = self.pool()
        if not terms:
            return [], n
        df = {t: d for t, d in self.db.execute(
            f"SELECT term, n FROM termdf WHERE term IN ({','.join('?' * len(terms))})", terms)}
        weights = [search.idf(n, df.get(t, 0)) for t in terms]
        least, rare = search.floor(n, len(terms)), search.specific(n)
        if not n or sum(map(search.most, weights)) < least * (1 - 1e-9):
            return [], n
        wanted = [terms[i] for i in search.needed(weights, search.RELATIVE * least)]
        avg, keys = search.average(n, total), keys_of(terms)
        out = []
        for *row, length, doc in self.naming(
                f"{columns}, c.doclen", f"{source} JOIN carddoc d ON d.rid = c.rid", where,
                params, wanted, [t for t, w in zip(terms, weights) if w >= rare]):
            points = search.score(weights, frequencies(doc or "", keys), length, avg, rare)
            if points > 0:
                out.append((points, *row))
        return out, n

    def scalar(self, sql: str, params=()):
        return self.db.execute(sql, params).fetchone()[0]

    def rows(self, sql: str, params=()) -> list:
        return self.db.execute(sql, params).fetchall()

    def each(self, sql: str, params=()):
        """The rows one at a time (a big result need not sit in memory)."""
        return self.db.execute(sql, params)

    def lines(self, name: str) -> int:
        """How many readable records the file holds (what ``len(load(name))`` says)."""
        row = self.db.execute("SELECT records FROM files WHERE name=?", (name,)).fetchone()
        return row[0] if row else 0

    def since(self, name: str, stamp: str) -> int:
        """Records of ``name`` whose ``str(ts)`` is at or after ``stamp`` (``stamp_key``)."""
        if len(stamp) < HOUR:  # then a stamp's prefix orders as the stamp itself
            return self.scalar("SELECT coalesce(sum(n), 0) FROM stamps WHERE name=? AND "
                               "hour >= ?", (name, stamp))
        hour = stamp[:HOUR]
        later = self.scalar("SELECT coalesce(sum(n), 0) FROM stamps WHERE name=? AND "
                            "((exact = 0 AND hour > ?) OR (exact = 1 AND hour >= ?))",
                            (name, hour, stamp))
        row = self.db.execute("SELECT rest FROM stamps WHERE name=? AND exact = 0 AND hour=?",
                              (name, hour)).fetchone()
        rests = row[0].split(_SEP)[1:] if row else []
        return later + sum(1 for rest in rests if hour + rest >= stamp)

    def recent(self) -> List[Tuple[str, str, str]]:
        """INDEX.md's latest rows over events, cards, recs and signals, newest first."""
        rows = [(ts, LABELS[name], what) for name, ts, what in
                self.db.execute("SELECT name, ts, what FROM recent")]
        return heapq.nlargest(RECENT, rows)

    def tallies(self, ids: Iterable[str]) -> Dict[str, Dict[str, int]]:
        """``score.tally`` restricted to ``ids``."""
        out: Dict[str, Dict[str, int]] = {}
        for chunk in _chunks(list(dict.fromkeys(ids))):
            marks = ",".join("?" * len(chunk))
            for target, what, n in self.db.execute(
                    f"SELECT target, what, n FROM tally WHERE target IN ({marks})", chunk):
                out.setdefault(target, {})[what] = n
        return out

    def evidence(self, ids: Optional[Iterable[str]] = None,
                 where: str = "") -> Dict[str, lifecycle.Evidence]:
        """``lifecycle.evidence`` for ``ids`` (or the rows ``where`` selects)."""
        sql = "SELECT id, used, helped, violated, last, last_violation FROM evidence"
        batches = [(sql + (f" WHERE {where}" if where else ""), ())] if ids is None else [
            (sql + f" WHERE id IN ({','.join('?' * len(c))})", c)
            for c in _chunks(list(dict.fromkeys(ids)))]
        out: Dict[str, lifecycle.Evidence] = {}
        for query, params in batches:
            for rid, used, helped, violated, last, last_violation in self.db.execute(query, params):
                ev = out[rid] = lifecycle.Evidence()
                ev.used, ev.helped, ev.violated = used, helped, violated
                ev.last, ev.last_violation = last, last_violation
        return out

    def touched(self) -> Dict[str, str]:
        return dict(self.db.execute("SELECT id, ts FROM touched"))

    # --- the safety screen's verdicts (``verdicts.Verdicts`` keeps them here) -----------------

    def verdict(self, key: str) -> Optional[List[str]]:
        """The reasons remembered for content digest ``key`` (empty: clear); None: not judged."""
        row = self.db.execute("SELECT reasons FROM verdicts WHERE digest=?", (key,)).fetchone()
        return [str(r) for r in fastjson.loads(row[0])] if row else None

    def put_verdicts(self, found: Dict[str, List[str]]) -> None:
        """Remember new verdicts and mark every card with that content, in one short write
        (the read snapshot moves on). A lock held too long loses them: they are a cache."""
        self.db.execute("COMMIT")
        try:
            self.db.execute("BEGIN IMMEDIATE")
            self.db.executemany("INSERT OR REPLACE INTO verdicts VALUES (?,?,?)",
                                [(k, int(bool(r)), fastjson.dumps(r)) for k, r in found.items()])
            self.db.executemany("UPDATE cards SET verdict=? WHERE sdigest=?",
                                [(int(bool(r)), k) for k, r in found.items()])
            self.db.execute("COMMIT")
        except sqlite3.OperationalError:
            if self.db.in_transaction:
                self.db.execute("ROLLBACK")
        finally:
            self.db.execute("BEGIN")

    def unjudged(self, offset: int = 0, limit: int = -1) -> List[Tuple[str, str]]:
        """Listed cards whose content has no verdict yet and no person accepted, in
        ``judge_order`` from ``offset`` on: (id, digest)."""
        return self.db.execute(f"SELECT id, sdigest {UNJUDGED} ORDER BY {JUDGE_ORDER}, rid DESC "
                               "LIMIT ? OFFSET ?", (limit, offset)).fetchall()

    def unjudged_of(self, digests: Iterable[str]) -> List[str]:
        """Ids of the unjudged cards (as ``unjudged``) holding one of these contents."""
        out: List[str] = []
        for chunk in _chunks(list(digests)):
            out += [r[0] for r in self.db.execute(
                f"SELECT id FROM cards INDEXED BY cards_sdigest WHERE sdigest IN "
                f"({','.join('?' * len(chunk))}) AND listed = 1 AND sok = 0 AND "
                "verdict IS NULL", chunk)]
        return out

    def naming(self, columns: str, source: str, where: str, params: Sequence,
               *terms: List[str]):
        """The rows ``(*columns, d.doc)`` of ``source`` (``FROM`` and joins, the document as
        ``d.doc``, the card as ``c``) meeting ``where`` whose document names one of each list
        of ``terms``: FTS5 finds them where the build has it, else every document meeting
        ``where`` is scanned."""
        if not all(terms):
            return []
        if self.fts:
            found = "c.rid IN (SELECT rowid FROM cardterms WHERE cardterms MATCH ?)"
            extra = [" AND ".join("(" + " OR ".join(f'"{t}"' for t in each) + ")"
                                  for each in terms)]  # terms are [a-z0-9]+
        else:
            found = " AND ".join("(" + " OR ".join(["instr(d.doc, ?) > 0"] * len(each)) + ")"
                                 for each in terms)
            extra = [key for each in terms for key in keys_of(each)]
        return self.db.execute(f"SELECT {columns}, d.doc {source} WHERE ({where or '1'}) AND "
                               f"{found}", [*params, *extra])

    def surfaced(self, ids: Iterable[str]) -> Dict[str, int]:
        out: Dict[str, int] = {}
        for chunk in _chunks(list(dict.fromkeys(ids))):
            marks = ",".join("?" * len(chunk))
            out.update(self.db.execute(f"SELECT id, n FROM surfaced WHERE id IN ({marks})", chunk))
        return out


# ``repr`` of each frequency, computed once: a rebuild writes millions of them and a store's
# frequencies are a few small whole numbers.
_REPRS = Memo(repr, 4096)


def encode_doc(doc: Dict[str, float]) -> str:
    """A card's document as `` term:frequency`` pairs: short to scan, each term findable as
    `` term:`` (terms are ``[a-z0-9]+``), its frequency read up to the next space."""
    if not doc:
        return ""
    return " " + " ".join(map(":".join, zip(doc, map(_REPRS.__getitem__, doc.values()))))


def doc_terms(text: str) -> List[str]:
    return [pair.split(":", 1)[0] for pair in (text or "").split()]


def keys_of(terms: Sequence[str]) -> List[str]:
    """How each term starts inside an encoded document (``encode_doc``)."""
    return [f" {t}:" for t in terms]


def frequencies(doc: str, keys: Sequence[str]) -> List[Optional[float]]:
    """Each term's frequency in an encoded document (None where the document lacks it): found
    with ``str.find``, which skips ahead where SQLite's ``instr`` compares at every byte."""
    out: List[Optional[float]] = []
    for key in keys:
        at = doc.find(key)
        if at < 0:
            out.append(None)
            continue
        at += len(key)
        end = doc.find(" ", at)
        out.append(float(doc[at:end] if end >= 0 else doc[at:]))
    return out


def _wide(kind: str) -> str:
    """The table (or view) holding whole records of ``kind``."""
    return "cardsx" if kind == "cards" else kind


def _chunks(items: list, size: int = 500):
    for start in range(0, len(items), size):
        yield items[start:start + size]


def _stat(path: str):
    try:
        return os.lstat(path)  # a file replaced by a link changes: the catch-up refuses it
    except FileNotFoundError:
        return None


def _view_columns(card: dict) -> tuple:
    """The columns ``catalog.keep`` and ``advice`` filter on, from a folded card."""
    view_status = card.get("status", "proposed")
    tags = card.get("tags")
    return (str(card.get("ts", "")), _text(view_status), _text(card.get("primary_skill", "unknown")),
            _text(card.get("scope", "project")), _text(card.get("status", "proposed")),
            _text(card.get("origin", "agent")),
            fastjson.dumps(tags) if isinstance(tags, list) else None)


class _Scratch:
    """What ``_Apply`` needs of an index, over another database (``apart``'s scratch file)."""

    def __init__(self, db, memory):
        self.db, self.memory = db, memory
        self.fts = False


APART_TABLES = ("files", "problems", "tally", "evidence", "touched", "stamps", "recent")


class _Apply:
    """One catch-up (or rebuild) inside the caller's write transaction."""

    def __init__(self, index: Index):
        self.ix, self.db, self.memory = index, index.db, index.memory
        self.dirty_cards: set = set()   # ids whose score or readiness may have changed
        self.changed: set = set()       # cards with a new version in this run
        self.checks: dict = {}          # file -> model.LineCheck, as a full read checks lines
        self.rebuilding = False
        self.left: list = []  # (terms, length) of listed cards as they were before this run
        self.score_views: Dict[str, tuple] = {}  # card id -> what its score is computed from

    def run(self, rebuild: bool) -> None:
        self.rebuilding = rebuild or not self.db.execute("SELECT 1 FROM cards LIMIT 1").fetchone()
        part = self._signals_apart() if rebuild else None
        for name in NAMES:
            if part is None or name != "signals":
                self._file(name, rebuild)
        if part is not None:
            self._derive(signals=False)  # meanwhile, what needs no signal (most of the work)
            if not apart.finish(part, self.db, APART_TABLES):
                self._file("signals", rebuild)  # the second process failed: read them here
            self._scored()
        else:
            evidence_only = self.dirty_cards - self.changed  # new evidence, same version
            self._max_violations()
            self._derive()  # also the rank keys of new versions
            self._rescore()
            self._rank_keys(evidence_only)
        self._trim_recent()

    def _signals_apart(self) -> Optional[apart.Part]:
        """The signals file (the biggest) read in a second process while this one folds the
        cards. What it yields beyond ``APART_TABLES`` is which cards to score again, and in
        a rebuild every card is scored anyway."""
        st = _stat(self.memory.path("signals"))
        if st is None:
            return None

        def work(db) -> None:
            for statement in _TABLES.split(";"):
                if statement.strip():
                    db.execute(statement)
            _Apply(_Scratch(db, self.memory))._file("signals", True)
        return apart.start(self.ix.path + apart.SUFFIX, st.st_size, work)

    # --- one file ------------------------------------------------------------------------------

    def _file(self, name: str, rebuild: bool) -> None:
        path = self.memory.path(name)
        row = None if rebuild else self.db.execute(
            "SELECT dev, ino, offset, lines, records, head, open_tail, mtime FROM files "
            "WHERE name=?", (name,)).fetchone()
        try:
            fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW)
        except FileNotFoundError:
            if row and row[2]:
                raise Rebuild(f"{name} is gone")
            return
        except OSError:  # a link (ELOOP): the full read refuses it, in its words
            raise Unusable(path) from None
        if fs.kind_of(os.fstat(fd).st_mode) != "file":  # a FIFO or a folder: the full read
            os.close(fd)                                   # says what is wrong, in its words
            raise Unusable(path)
        with os.fdopen(fd, "rb") as fh:
            st = os.fstat(fh.fileno())
            dev, ino, offset, lines, records, head, open_tail, mtime = row or (
                st.st_dev, st.st_ino, 0, 0, 0, b"", 0, -1)
            if (dev, ino) != (st.st_dev, st.st_ino) or st.st_size < offset or \
                    (head and fh.read(len(head)) != bytes(head)) or \
                    (st.st_size == offset and mtime not in (-1, st.st_ctime_ns)):
                raise Rebuild(f"{name} was replaced or rewritten")
            fh.seek(offset)
            if offset == 0 and fh.read(3) == b"\xef\xbb\xbf":  # a byte order mark: skipped
                offset = 3
            fh.seek(offset)
            if open_tail:  # the last line had no newline when read: it must end now
                first = fh.read(1)
                if first not in (b"", b"\n"):
                    raise Rebuild(f"{name}: a line read without its newline grew")
                offset += len(first)
                open_tail = 0 if first else 1
            carry = b""
            while True:
                data = fh.read(CHUNK)
                if not data:
                    break
                data = carry + data
                cut = data.rfind(b"\n") + 1
                lines, records = self._lines(name, data[:cut], lines, records)
                offset += cut
                carry = data[cut:]
            if carry.strip():  # a last line without its newline counts when it parses
                record, reason = store.parse_line(carry, True)
                if not reason and isinstance(record, dict):
                    lines, records = self._lines(name, carry + b"\n", lines, records)
                    offset += len(carry)
                    open_tail = 1
            if len(head) < 64:
                fh.seek(0)
                head = fh.read(min(64, offset))
            # the change time of exactly what was read, if known: the inode's, which every
            # write moves and no restore can set back (``cp -p``, ``rsync -t`` and ``touch -d``
            # restore the modification time after rewriting a file in place)
            after = os.fstat(fh.fileno())
            mtime = after.st_ctime_ns if after.st_size == offset else -1
        self.db.execute("INSERT OR REPLACE INTO files VALUES (?,?,?,?,?,?,?,?,?)",
                        (name, st.st_dev, st.st_ino, offset, lines, records, head, open_tail,
                         mtime))

    def _lines(self, name: str, data: bytes, lines: int, records: int):
        """Parse whole lines (``data`` ends with a newline), apply them; new counters."""
        parsed, problems = [], []
        check = self.checks.get(name)
        if check is None:
            check = self.checks[name] = model.LineCheck(name)
            if name in ("cards", "recs"):  # "the first line of an id needs a title": across runs
                check.titled = _Titled(self.db, name, check.titled)
        import gc
        collecting = gc.isenabled()
        gc.disable()  # many fresh dicts would trigger full collections
        try:
            for raw in data.split(b"\n")[:-1]:
                lines += 1
                if not raw.strip():
                    continue
                record, reason = store.parse_line(raw, False)
                if not reason:
                    reason = check.problem(record)
                if reason:  # damaged, of the wrong shape, or newer: as ``Memory.scan`` skips it
                    problems.append((name, lines, reason, raw))
                    continue
                parsed.append((lines, record))
            records += len(parsed)
            if problems:
                self.db.executemany("INSERT INTO problems VALUES (?,?,?,?)", problems)
            self._apply(name, parsed)
        finally:
            if collecting:
                gc.enable()
        return lines, records

    def _apply(self, name: str, parsed: List[Tuple[int, dict]]) -> None:
        records = [r for _, r in parsed]
        self._stamps(name, records)
        if name in LABELS:
            self._recent(name, records)
        if name == "signals":
            self._signals(records)
        elif name in ("cards", "recs"):
            self._fold(name, records)
        elif name == "surfacings":
            self._surfacings(records)

    # --- per kind --------------------------------------------------------------------------------

    def _stamps(self, name: str, records: List[dict]) -> None:
        hours: Dict[Tuple[int, str], list] = {}
        for r in records:
            exact, hour, rest = stamp_key(str(r.get("ts", "")))
            hours.setdefault((exact, hour), []).append(rest)
        self.db.executemany("INSERT INTO stamps VALUES (?,?,?,?,?) ON CONFLICT(name, exact, hour) "
                            "DO UPDATE SET n = n + excluded.n, rest = rest || excluded.rest",
                            [(name, exact, hour, len(rests), "".join(_SEP + r for r in rests))
                             for (exact, hour), rests in hours.items()])

    def _recent(self, name: str, records: List[dict]) -> None:
        def rows():
            for r in records:
                what = r.get("title") or r.get("task_summary") or \
                    f"{r.get('kind', '')} {r.get('aha_id') or r.get('rec_id') or ''}".strip()
                yield str(r.get("ts", "")), text.cell(what)
        stamps = [str(r.get("ts", "")) for r in records]
        if len(records) > RECENT:  # only lines that can be among the latest get their text
            floor = heapq.nlargest(RECENT, stamps)[-1]
            records = [r for r, ts in zip(records, stamps) if ts >= floor]
        self.db.executemany("INSERT INTO recent VALUES (?,?,?)",
                            [(name, ts, what) for ts, what in heapq.nlargest(RECENT, rows())])

    def _trim_recent(self) -> None:
        for name in LABELS:
            self.db.execute("DELETE FROM recent WHERE name=? AND rowid NOT IN (SELECT rowid FROM "
                            "recent WHERE name=? ORDER BY ts DESC, what DESC LIMIT ?)",
                            (name, name, RECENT))

    def _signals(self, records: List[dict]) -> None:
        counts: Dict[Tuple[str, str], int] = {}
        for (target, slot) in score.targets(records):
            counts[(target, slot)] = counts.get((target, slot), 0) + 1
        self.db.executemany("INSERT INTO tally VALUES (?,?,?) ON CONFLICT(target, what) "
                            "DO UPDATE SET n = n + excluded.n",
                            [(t, w, n) for (t, w), n in counts.items()])
        self.dirty_cards.update(t for t, _ in counts)
        ev = lifecycle.evidence(records)
        self.db.executemany(
            "INSERT INTO evidence VALUES (?,?,?,?,?,?) ON CONFLICT(id) DO UPDATE SET "
            "used = used + excluded.used, helped = helped + excluded.helped, "
            "violated = violated + excluded.violated, last = max(last, excluded.last), "
            "last_violation = max(last_violation, excluded.last_violation)",
            [(i, e.used, e.helped, e.violated, e.last, e.last_violation) for i, e in ev.items()])
        touched: Dict[str, str] = {}
        for s in records:
            rid = s.get("rec_id")
            if isinstance(rid, str) and s.get("kind") != "rec_reinforced":
                touched[rid] = max(touched.get(rid, ""), str(s.get("ts", "")))
        self.db.executemany("INSERT INTO touched VALUES (?,?) ON CONFLICT(id) "
                            "DO UPDATE SET ts = max(ts, excluded.ts)", list(touched.items()))

    def _surfacings(self, records: List[dict]) -> None:
        counts: Dict[str, int] = {}
        for srf in records:
            for aid in srf.get("lesson_ids") or []:
                counts[aid] = counts.get(aid, 0) + 1
        self.db.executemany("INSERT INTO surfaced VALUES (?,?) ON CONFLICT(id) "
                            "DO UPDATE SET n = n + excluded.n",
                            [(k, n) for k, n in counts.items() if isinstance(k, str)])

    def _fold(self, name: str, records: List[dict]) -> None:
        """Merge new lines into the stored fold; card columns are derived once, at the end."""
        pending: Dict[str, Optional[dict]] = {}
        rowids: Dict[str, Optional[int]] = {}
        for record in records:
            rid = record.get("id")
            if not isinstance(rid, str) or not rid:
                continue
            if rid not in pending:
                pending[rid], rowids[rid] = self._stored(name, rid)
            pending[rid] = merge(pending[rid], record)
        if name == "recs":
            for rid, folded in pending.items():
                self._upsert("recs", rid, {"data": fastjson.dumps(folded),
                                           "dkey": dedup_key(folded)})
            return
        self.db.executemany("INSERT OR IGNORE INTO cards(id) VALUES (?)",
                            [(rid,) for rid, row in rowids.items() if row is None])
        self.db.executemany("INSERT INTO cardwide(rid, data) SELECT rid, ? FROM cards WHERE id=? "
                            "ON CONFLICT(rid) DO UPDATE SET data = excluded.data",
                            [(fastjson.dumps(folded), rid) for rid, folded in pending.items()])
        self.changed.update(pending)

    def _stored(self, name: str, rid: str):
        """The folded record stored for ``rid`` and its card rowid; the first time a card is
        touched in this run, its document leaves the listed cards' term counts (``_derive``)."""
        if name == "recs":
            row = self.db.execute("SELECT data FROM recs WHERE id=?", (rid,)).fetchone()
            return (fastjson.loads(row[0]) if row else None), None
        if self.rebuilding and rid not in self.changed:
            return None, None  # the tables started empty: not stored yet
        row = self.db.execute("SELECT c.rid, w.data, d.doc, c.listed, c.doclen FROM cards c "
                              "JOIN cardwide w ON w.rid = c.rid LEFT JOIN carddoc d "
                              "ON d.rid = c.rid WHERE c.id=?", (rid,)).fetchone()
        if row is None:
            return None, None
        if rid not in self.changed and row[3]:
            self.left.append((doc_terms(row[2]), row[4] or 0.0))
            self.changed.add(rid)
        return fastjson.loads(row[1]), row[0]

    def _scored(self) -> None:
        """After a rebuild whose signals were read apart (``_derive`` ran before they were in):
        score and readiness of every card, from what ``_derive`` kept of it (``score_views``)
        instead of reading it again, and the rank keys of the cards with evidence."""
        self._max_violations()
        derived = [t for t, in self.db.execute(  # in row order, as ``_derive`` wrote them
            "SELECT id FROM cards ORDER BY rid") if t in self.score_views]
        for chunk in _chunks(derived):
            counts, rows = self.ix.tallies(chunk), []
            for cid in chunk:
                rows.append((*_score(self.score_views[cid], counts.get(cid, {})), cid))
            self.db.executemany("UPDATE cards SET score=?, ready=? WHERE id=?", rows)
        self._rank_keys([i for i, in self.db.execute(
            "SELECT id FROM cards WHERE id IN (SELECT id FROM evidence) ORDER BY rid")])

    def _derive(self, signals: bool = True) -> None:
        """Columns of every card changed in this run: tokenized once, whatever its versions
        (without ``signals``: as if no signal named any card; ``_scored`` follows)."""
        df, n, length = Counter(), 0, 0.0  # changes of the listed cards' term counts (in C)
        for terms, size in self.left:
            df.subtract(iter(terms))
            n, length = n - 1, length - size
        ids = list(self.changed)
        if self.rebuilding:  # every card: in row order, so each table is written front to back
            ids = [cid for cid, in self.db.execute("SELECT id FROM cards ORDER BY rid")]
        for chunk in _chunks(ids):
            counts, evidence = (self.ix.tallies(chunk), self.ix.evidence(chunk)) if signals \
                else ({}, {})
            marks = ",".join("?" * len(chunk))
            rows = self.db.execute(f"SELECT c.id, c.rid, w.data FROM cards c JOIN cardwide w ON "
                                   f"w.rid = c.rid WHERE c.id IN ({marks})", chunk).fetchall()
            narrow, wide, texts, names = [], [], [], None
            for cid, row, data in rows:
                columns = self._card_columns(fastjson.loads(data),
                                             counts.get(cid, {}) if signals else None)
                view = columns.pop("_view")
                if not signals:
                    self.score_views[cid] = view
                columns["rankkey"], columns["expires"] = _rank_key(columns, evidence.get(cid))
                doc, terms = columns.pop("doc"), columns.pop("_doc")
                names = names or list(columns)
                narrow.append([*columns.values(), row])
                wide.append((row, doc))
                texts.append((row, " ".join(terms)))
                if columns["listed"]:
                    df.update(iter(terms))
                    n, length = n + 1, length + columns["doclen"]
            if names:
                self._terms(chunk, texts)
                self.db.executemany(f"UPDATE cards SET {', '.join(f'{n}=?' for n in names)} "
                                    "WHERE rid=?", narrow)
                self.db.execute(f"UPDATE cards SET verdict = (SELECT v.held FROM verdicts v "
                                f"WHERE v.digest = cards.sdigest) WHERE id IN ({marks})", chunk)
                self.db.executemany("INSERT INTO carddoc VALUES (?,?) ON CONFLICT(rid) DO UPDATE "
                                    "SET doc = excluded.doc", wide)
        self.db.executemany("INSERT INTO termdf VALUES (?,?) ON CONFLICT(term) "
                            "DO UPDATE SET n = n + excluded.n", [(t, k) for t, k in df.items() if k])
        self.dirty_cards.difference_update(ids)
        self._count("list_n", n)
        self._count("list_length", int(length))  # lengths are whole (weights are)

    def _count(self, name: str, n: int) -> None:
        self.db.execute("INSERT INTO maxima VALUES (?, ?) ON CONFLICT(name) DO UPDATE SET "
                        "n = n + excluded.n", (name, n))

    def _terms(self, ids: List[str], texts: List[Tuple[int, str]]) -> None:
        """Keep ``cardterms`` (when there is one) in step with new documents: a contentless
        table forgets a row only when told its old terms, read here from ``carddoc``."""
        if not self.ix.fts:
            return
        if not self.rebuilding:
            marks = ",".join("?" * len(ids))
            self.db.executemany(
                "INSERT INTO cardterms(cardterms, rowid, terms) VALUES ('delete', ?, ?)",
                [(rid, " ".join(doc_terms(doc))) for rid, doc in self.db.execute(
                    f"SELECT d.rid, d.doc FROM carddoc d JOIN cards c ON c.rid = d.rid "
                    f"WHERE c.id IN ({marks})", ids)])
        self.db.executemany("INSERT INTO cardterms(rowid, terms) VALUES (?, ?)", texts)

    def _card_columns(self, card: dict, counts: Optional[Dict[str, int]]) -> dict:
        """The card's columns; without ``counts`` (its signals not read yet) no score nor
        readiness, which ``_scored`` gives every card from ``_view``."""
        ts, status, skill, scope, raw_status, origin, tags = _view_columns(card)
        fields = _score_fields(card)
        points, ready = (None, None) if counts is None else _score(fields, counts)
        doc = search.document(card)
        return {"ts": ts, "status": status, "skill": skill,
                "scope": scope, "raw_status": raw_status, "origin": origin, "tags": tags,
                "dkey": dedup_key(card),
                "score": points, "ready": ready,
                "doc": encode_doc(doc), "doclen": sum(doc.values()),
                "pool": int(surfaceable(card)), "base": lifecycle.base_confidence(card),
                "listed": int(status is None or status not in model.HIDDEN_STATUSES),
                "first": str(card.get("_first_ts") or card.get("ts") or ""),
                "last_seen": str(card.get("last_seen") or ""),
                "_doc": doc, "least": item_floor(card),
                "sdigest": content.digest(card), "sok": int(content.accepted(card)),
                "_view": fields}  # what ``_scored`` scores it from

    def _max_violations(self) -> None:
        """The most violations a card has had (``maxima``): advice's bound allows for the
        rounding of recency in proportion to a card's escalation. Counts only grow."""
        if self.rebuilding:
            most = self.db.execute("SELECT coalesce(max(violated), 0) FROM evidence").fetchone()[0]
        else:
            most = 0
            for chunk in _chunks(list(self.dirty_cards)):
                most = max(most, self.db.execute(
                    "SELECT coalesce(max(violated), 0) FROM evidence WHERE id IN "
                    f"({','.join('?' * len(chunk))})", chunk).fetchone()[0])
        self.db.execute("INSERT INTO maxima VALUES ('violated', ?) ON CONFLICT(name) "
                        "DO UPDATE SET n = max(n, excluded.n)", (most,))

    def _rank_keys(self, ids: Iterable[str]) -> None:
        """The rank key (``_rank_key``) of cards whose evidence changed without a new version
        (a new version gets its key in ``_derive``)."""
        for chunk in _chunks(list(ids)):
            evidence = self.ix.evidence(chunk)
            rows = self.db.execute(
                "SELECT id, rid, raw_status, pool, base, first, last_seen FROM cards "
                f"WHERE id IN ({','.join('?' * len(chunk))})", chunk).fetchall()
            self.db.executemany("UPDATE cards SET rankkey=?, expires=? WHERE rid=?", [
                (*_rank_key({"raw_status": status, "pool": pool, "base": base, "first": first,
                             "last_seen": seen}, evidence.get(cid)), rid)
                for cid, rid, status, pool, base, first, seen in rows])

    def _upsert(self, table: str, rid: str, columns: dict) -> int:
        """Update or insert the row of id ``rid``; its rowid."""
        names = [n for n in columns if not n.startswith("_")]
        sets = ", ".join(f"{n}=?" for n in names)
        values = [columns[n] for n in names]
        row = self.db.execute(f"UPDATE {table} SET {sets} WHERE id=? RETURNING rid",
                              (*values, rid)).fetchone()
        if row:
            return row[0]
        return self.db.execute(f"INSERT INTO {table}(id, {', '.join(names)}) VALUES "
                               f"(?{', ?' * len(names)})", (rid, *values)).lastrowid

    def _rescore(self) -> None:
        """Cards whose signals changed without a new version of the card itself."""
        ids = list(self.dirty_cards)
        for chunk in _chunks(ids):
            marks = ",".join("?" * len(chunk))
            counts, rows = self.ix.tallies(chunk), []
            for rid, data in self.db.execute(
                    f"SELECT id, data FROM cardsx WHERE id IN ({marks})", chunk).fetchall():
                rows.append((*_score(_score_fields(fastjson.loads(data)), counts.get(rid, {})),
                             rid))
            self.db.executemany("UPDATE cards SET score=?, ready=? WHERE id=?", rows)


def _score_fields(card: dict) -> tuple:
    """What a card's score and backport readiness read of it, with ``public``'s defaults."""
    return card.get("status", "proposed"), card.get("scope", "project"), \
        card.get("shareable", True)


def _score(fields: tuple, counts: Dict[str, int]) -> Tuple[int, int]:
    """``(score, ready)`` of a card from ``_score_fields`` and its signal counts."""
    status, scope, shareable = fields
    view = {"status": status, "scope": scope, "shareable": shareable}
    return score.score(view, counts)[0], int(score.backport_ready(view, counts))


def _rank_key(columns: dict, ev: Optional[lifecycle.Evidence]
              ) -> Tuple[Optional[float], Optional[float]]:
    """advice's rank key (``topk.rank_key``) from a card's columns, and when its confidence
    falls below the floor for good (``topk.expiry``); NULL outside its pool."""
    if not columns["pool"]:
        return None, None
    last = max(columns["last_seen"], columns["first"], ev.last if ev is not None else "")
    key = topk.rank_key(columns["raw_status"], columns["base"], ev, last)
    return key, (None if key is None else topk.expiry(columns["base"], ev, last))


def item_floor(card: dict) -> int:
    """How long advice's item for this card is at least: its first line ``- [id] title: detail``
    (first step, else the problem) before any cut; advice caps it at LINE_MAX - 1 (a cut may drop
    one trailing space before its ellipsis), since an
    escalation note and a correction only ever lengthen the item."""
    steps = card.get("solution_steps")
    detail = next((s for s in steps if isinstance(s, str) and s.strip()), "") \
        if isinstance(steps, list) else ""
    detail = text.collapsed(detail or card.get("problem") or "")
    line = f"- [{text.collapsed(card['id'])}] {text.collapsed(card.get('title'))}"
    return len(line + (f": {detail}" if detail else ""))
