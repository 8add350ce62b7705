import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from 'pino';
import type { Entry, EntryAddress } from '../../domain/entry.ts';
import { LocalChangeFeed } from '../local-change-feed.ts';
import type { Sql } from './client.ts';
import { withDeadline } from './deadline.ts';
import { schemaMismatch } from './db-errors.ts';
import { FORGET_CHANNEL, forgetLogAfter, maxForgetSeq } from './forget.ts';
import { HeldEntries, readHeadsOf } from './held-entries.ts';
import { forgetNames } from '../../domain/forget-target.ts';
import type { ForgetListener } from '../../ports/change-feed.ts';
import type { ForgetTarget } from '../../ports/store.ts';
import { ForgetMarks } from './forget-marks.ts';
import { fetchAfterSeq, fetchBySeq, maxSeq, parseWriteNote, RecentSet, type WriteNote } from './write-notes.ts';

const CHANNEL = 'cairn_write';
const BATCH = 500;
/**
 * Sequence numbers are taken before commit, so transactions can commit out of seq order: a
 * catch-up rescans this far below the highest seq already seen, and the de-duplication
 * window (published) is larger than that so nothing is announced twice.
 */
const CATCH_UP_WINDOW = 1000;
const LOCAL_CAPACITY = 2000;
const RETRY_MS = 1000;
/** Logged forgets remembered as announced here (by seq). */
const FORGET_SEQS_KEPT = 4096;

type Job = { kind: 'note'; note: WriteNote } | { kind: 'catch-up' };

/**
 * The local feed, counting its forget listeners: what listens for forgets keeps something of
 * what it is handed (an in-process search index, the Cortex), and only while one does is what
 * is handed out noted (HeldEntries). A search indexer writing to the database, or a stream,
 * listens only for writes.
 */
class HoldersFeed extends LocalChangeFeed {
  holders = 0;

  override subscribeForgets(listener: ForgetListener): () => void {
    const unsubscribe = super.subscribeForgets(listener);
    this.holders += 1;
    let done = false;
    return () => {
      if (!done) this.holders -= 1;
      done = true;
      unsubscribe();
    };
  }
}

/** How the feed keeps its LISTEN session: its own client, checked every `checkMs`. */
export interface Listening {
  /** A new client of one connection for the LISTEN session (a fresh one replaces a silent one). */
  connect: () => Sql;
  /**
   * After this long without a notification, the feed notifies itself on a channel of its own,
   * and when that has not arrived this long after it was sent, replaces the session: about
   * twice this from the last notification heard on a silent session to the new one. Default 5 s.
   */
  checkMs?: number;
}
const DEFAULT_CHECK_MS = 5_000;

/**
 * The store's change feed, fed by LISTEN cairn_write on a dedicated connection, so writes by
 * every process sharing the database reach this process's subscribers, in notification
 * (= commit) order. The driver re-issues LISTEN whenever that connection comes back; each
 * time it does, forgets committed meanwhile are read from cairn_forget_log and announced, then
 * versions committed meanwhile are fetched by seq and announced (catch-up).
 *
 * A session can also stop delivering without its socket closing (a proxy or middlebox whose
 * far side died, a re-LISTEN the driver dropped after repeated kills): the feed would then
 * hear nothing, and this replica's search index and streams would go stale, until restart.
 * So the feed checks its session: quiet for `checkMs`, it sends itself a notification on a
 * channel only it listens to, and when that does not come back within another `checkMs`, it
 * drops the session for a new one, whose LISTEN starts a catch-up.
 *
 * Each ping carries a number, and only its own notification (or a later ping's) answers it: the
 * notification often arrives on the session before the pg_notify statement's answer on the
 * pool, so the ping is marked out before it is sent, never after. One timer, set for the next
 * moment a decision is due (quiet for `checkMs`, or a ping out for `checkMs`), does the checking.
 */
export class WriteFeed {
  readonly changes: HoldersFeed;
  private readonly sql: Sql;
  private readonly logger: Logger;
  private readonly timeoutMs: number;
  private readonly jobs: Job[] = [];
  private readonly published = new RecentSet<number>(4 * CATCH_UP_WINDOW);
  /** Versions this process appended, so their own notifications need no fetch. */
  private readonly local = new Map<number, Entry>();
  private highSeq = 0;
  /** Every forget logged up to this seq (cairn_forget_log) has been announced here, or came before start. */
  private forgetSeq = 0;
  /** Logged forgets announced here (or this process's own), so none is announced twice. */
  private readonly forgetSeqs = new RecentSet<number>(FORGET_SEQS_KEPT);
  /**
   * Forgets a catch-up announced from the log: versions it finds still stored that they name
   * were written after them, and are announced again even if announced already (see catchUp).
   */
  private missedForgets: ForgetTarget[] = [];
  /** What this process handed its in-process holders (HeldEntries): what a check after an absence checks. */
  readonly held = new HeldEntries();
  /**
   * A catch-up found forget log rows it never read trimmed (cairn_forget_log_trimmed): what this
   * process holds is checked against the heads (recheck) before that catch-up ends; kept set
   * until a check completes, so a retried catch-up does it too.
   */
  private recheckOwed = false;
  /** Entries a check found forgotten and dropped from the holders, whose heads it has not announced again yet. */
  private readonly reloading: EntryAddress[] = [];
  /** Settles once start() has read where the log and the versions stand; a catch-up waits for it. */
  private started: Promise<void> = Promise.resolve();
  private listens = 0;
  private draining: Promise<void> | null = null;
  private closed = false;
  private readonly connect: () => Sql;
  private readonly checkMs: number;
  /** The client holding the LISTEN session; replaced when found silent. */
  private listener: Sql;
  /** A channel no other process listens to: what the feed hears on it, it sent itself. */
  private readonly selfChannel = `cairn_feed_${randomBytes(8).toString('hex')}`;
  /** When anything was last heard on the session (or it was last set up). */
  private lastHeard = Date.now();
  /** The notification the feed sent itself and has not heard since (`sentAt`: when its pg_notify returned); null when none is out. */
  private ping: { id: number; sentAt: number | null } | null = null;
  /** The number of the last ping sent: a self-notification carries it, and answers pings up to it. */
  private pings = 0;
  /** A session whose set-up failed: the next check sets one up again. */
  private unlistened = false;
  private checking = false;
  private checkTimer: NodeJS.Timeout | null = null;

  constructor(sql: Sql, logger: Logger, timeoutMs: number, listening: Listening) {
    this.sql = sql;
    this.logger = logger;
    this.timeoutMs = timeoutMs;
    this.connect = listening.connect;
    this.checkMs = listening.checkMs ?? DEFAULT_CHECK_MS;
    this.listener = this.connect();
    this.changes = new HoldersFeed((error) => logger.error({ err: error }, 'change listener failed'));
    this.ownWrites = new LocalChangeFeed((error) => logger.error({ err: error }, 'own-write listener failed'));
  }

  /** Forgets made by this process, already announced here: their notifications are skipped. */
  private readonly ownForgets = new RecentSet<string>(100);
  /** Every forget announced here, so that a version read before it is not announced after it. */
  readonly forgets = new ForgetMarks();
  /**
   * This process's own versions, announced as soon as their commit returns, before their
   * notification comes back to `changes` (which waits for it, to keep commit order). For an
   * in-process search index, which must find a write by the time it is acknowledged and keeps
   * the newest version of each entry whatever order versions come in.
   */
  readonly ownWrites: LocalChangeFeed;

  /**
   * Forgets are listened for first: the driver re-issues the LISTENs in that order on the one
   * connection it keeps for them, so when LISTEN cairn_write is back (and the catch-up starts),
   * LISTEN cairn_forget is too, and the catch-up's read of the forget log misses nothing.
   */
  async start(): Promise<void> {
    let started: () => void = () => {};
    this.started = new Promise((resolve) => (started = resolve));
    try {
      await this.listenOn(this.listener);
      this.highSeq = Math.max(this.highSeq, await maxSeq(this.sql));
      this.forgetSeq = Math.max(this.forgetSeq, await maxForgetSeq(this.sql));
    } finally {
      started();
    }
    this.lastHeard = Date.now();
    this.scheduleCheck(this.checkMs);
  }

  /** The next check, in `ms` (one timer at a time). */
  private scheduleCheck(ms: number): void {
    if (this.closed) return;
    if (this.checkTimer) clearTimeout(this.checkTimer);
    this.checkTimer = setTimeout(() => void this.check(), Math.max(1, ms)).unref();
  }

  private async listenOn(listener: Sql): Promise<void> {
    const heard = () => (this.lastHeard = Date.now());
    await listener.listen(FORGET_CHANNEL, (payload) => (heard(), this.onForget(payload)));
    await listener.listen(CHANNEL, (payload) => (heard(), this.onPayload(payload)), () => (heard(), this.onListen()));
    await listener.listen(this.selfChannel, (payload) => {
      heard();
      const id = Number(payload);
      if (this.ping && Number.isSafeInteger(id) && id >= this.ping.id) this.ping = null;
    });
  }

  /**
   * One look at the session (see the class comment); never two at once. Then the next check is
   * set for when a decision will be due: the ping out for `checkMs`, or the session quiet for it.
   */
  private async check(): Promise<void> {
    if (this.closed || this.checking) return;
    this.checking = true;
    let next = this.checkMs;
    try {
      const ping = this.ping;
      if (this.unlistened || (ping?.sentAt != null && Date.now() - ping.sentAt >= this.checkMs)) await this.replaceSession();
      else if (ping) next = ping.sentAt === null ? this.checkMs : ping.sentAt + this.checkMs - Date.now();
      else if (Date.now() - this.lastHeard < this.checkMs) next = this.lastHeard + this.checkMs - Date.now();
      else {
        // Marked out before it is sent: its notification can come back before the statement does.
        const sent = { id: ++this.pings, sentAt: null as number | null };
        this.ping = sent;
        try {
          // Sent on the pool, not the session: only the session's hearing is in question.
          await this.timed(this.sql`select pg_notify(${this.selfChannel}, ${String(sent.id)})`);
        } catch (error) {
          // Never sent (or not known to be): nothing to wait for.
          if (this.ping === sent) this.ping = null;
          throw error;
        }
        // Committed now: from here it has `checkMs` to arrive, unless it did already.
        if (this.ping === sent) {
          sent.sentAt = Date.now();
          next = this.checkMs;
        } else next = this.lastHeard + this.checkMs - Date.now();
      }
    } catch (error) {
      // The database is unreachable: the driver's own reconnection is what is needed then.
      this.logger.debug({ err: error }, 'change feed could not check its LISTEN session');
    } finally {
      this.checking = false;
      this.scheduleCheck(next);
    }
  }

  private async replaceSession(): Promise<void> {
    this.logger.warn({ silent_ms: Date.now() - this.lastHeard }, 'LISTEN cairn_write stopped delivering (a notification sent to itself never came); opening a new session');
    const old = this.listener;
    this.listener = this.connect();
    this.ping = null;
    void old.end({ timeout: 0 }).catch(() => {});
    try {
      await this.listenOn(this.listener);
      this.unlistened = false;
    } catch (error) {
      this.unlistened = true;
      throw error;
    }
  }

  /**
   * Versions this process appended: announced on `ownWrites` now, and kept so that their
   * notification needs no fetch. `mark` was taken before the append: a version a forget heard
   * since names is neither (the forget may have committed after it; the fetch decides).
   */
  appended(versions: readonly { seq: number; entry: Entry }[], mark: number): void {
    for (const { seq, entry } of versions) {
      if (this.closed || this.published.has(seq) || this.forgets.namesSince(mark, entry)) continue;
      this.local.set(seq, entry);
      if (this.local.size > LOCAL_CAPACITY) this.local.delete(this.local.keys().next().value as number);
      this.hold(entry);
      this.ownWrites.publish(entry);
    }
  }

  /** Stops announcing; the caller ends the connections, which ends any fetch in flight. */
  close(): Promise<void> {
    this.closed = true;
    this.jobs.length = 0;
    if (this.checkTimer) clearTimeout(this.checkTimer);
    void this.listener.end({ timeout: 0 }).catch(() => {});
    return this.draining ?? Promise.resolve();
  }

  /** A forget this process is about to commit: its notification (which may come first) is skipped. */
  expectForget(id: string): void {
    this.ownForgets.add(id);
  }

  /**
   * A forget committed by this process, or heard of from another: tell local subscribers now.
   * Versions it names that are still waiting for their notification are not announced. `seq`:
   * its row in cairn_forget_log (none from a server of an earlier release).
   */
  forgotten(target: ForgetTarget, seq?: number | null): void {
    if (typeof seq === 'number') this.noteForgetSeq(seq);
    for (const [seq, entry] of this.local) if (forgetNames(target, entry)) this.local.delete(seq);
    this.held.drop(target);
    this.forgets.note(target);
    this.changes.publishForget(target);
  }

  private onForget(payload: string): void {
    try {
      const { id, target, seq } = JSON.parse(payload) as { id: string; target: ForgetTarget; seq?: unknown };
      if (this.closed) return;
      const logged = Number.isSafeInteger(seq) ? (seq as number) : null;
      // Announced already, from the log by a catch-up.
      if (logged !== null && this.forgetSeqs.has(logged)) return;
      if (this.ownForgets.has(id)) return void (logged !== null && this.noteForgetSeq(logged));
      this.forgotten(target, logged);
    } catch {
      this.logger.warn({ payload: payload.slice(0, 200) }, 'ignoring a malformed cairn_forget notification');
    }
  }

  private noteForgetSeq(seq: number): void {
    this.forgetSeqs.add(seq);
    while (this.forgetSeqs.has(this.forgetSeq + 1)) this.forgetSeq += 1;
  }

  private onPayload(payload: string): void {
    const note = parseWriteNote(payload);
    if (!note) return void this.logger.warn({ payload: payload.slice(0, 200) }, 'ignoring a malformed cairn_write notification');
    this.enqueue({ kind: 'note', note });
  }

  private onListen(): void {
    if (++this.listens === 1) return; // the first LISTEN, from start()
    this.logger.info('LISTEN cairn_write re-established; catching up on missed writes');
    this.enqueue({ kind: 'catch-up' });
  }

  private enqueue(job?: Job): void {
    if (this.closed) return;
    if (job) this.jobs.push(job);
    if (this.draining) return;
    this.draining = this.drain().finally(() => {
      this.draining = null;
      if (this.jobs.length > 0) this.enqueue();
    });
  }

  private async drain(): Promise<void> {
    while (this.jobs.length > 0 && !this.closed) {
      if (this.jobs[0]?.kind === 'catch-up') {
        this.jobs.shift();
        await this.retrying(() => this.catchUp());
        continue;
      }
      const notes: WriteNote[] = [];
      while (notes.length < BATCH && this.jobs[0]?.kind === 'note') notes.push((this.jobs.shift() as { note: WriteNote }).note);
      await this.retrying(() => this.deliver(notes));
    }
  }

  /** Retries until it works or the feed closes: dropping a batch would lose announcements. */
  private async retrying(work: () => Promise<void>): Promise<void> {
    for (let attempt = 1; !this.closed; attempt++) {
      try {
        return await work();
      } catch (error) {
        if (this.closed) return;
        // A table or column gone says so, and what to do, rather than the driver's bare text.
        if (attempt === 1) this.logger.warn({ err: schemaMismatch(error, 'change feed') ?? error }, 'change feed cannot read from the database; retrying');
        await sleep(RETRY_MS);
      }
    }
  }

  /** A fetch that hangs (a silent network) fails instead, so the retry loop goes on. */
  private readonly timed = <T>(query: Promise<T>): Promise<T> => withDeadline(query, this.timeoutMs, 'change feed');

  private async deliver(notes: WriteNote[]): Promise<void> {
    const mark = this.forgets.mark();
    const wanted = notes.filter((n) => !this.local.has(n.seq) && !this.published.has(n.seq)).map((n) => n.seq);
    const fetched = wanted.length > 0 ? await this.timed(fetchBySeq(this.sql, wanted)) : new Map<number, Entry>();
    for (const note of notes) {
      const entry = this.local.get(note.seq) ?? fetched.get(note.seq);
      this.local.delete(note.seq);
      if (entry) this.publish(note.seq, entry, mark);
      // Gone between its commit and this read: a forget or a retention pass removed it.
      else if (!this.published.has(note.seq)) this.logger.info({ note }, 'announced version no longer stored (forgotten or dropped by retention since)');
    }
  }

  /**
   * Announce what was committed while LISTEN was down. Forgets first, from cairn_forget_log
   * (their NOTIFY went out while no session listened): the versions read after them are either
   * gone (forgotten) or were written after them. A version written after a missed forget may
   * have been announced already, before the catch-up (its notification came on the new
   * session first): announcing the forget after it would drop it from subscribers' copies, so
   * such a version is announced again. Forgets logged concurrently (in seq order = commit order:
   * forget.ts) are heard on the LISTEN that is back, and ForgetMarks covers them.
   *
   * The scan of versions starts below everything still remembered as published, not below the
   * high-water mark: a new session can hear a fresh notification before the driver reports the
   * LISTEN (both arrive in one socket read), and that version raises the mark above the gap it
   * must cover.
   */
  private async catchUp(): Promise<void> {
    // A LISTEN lost during start(): from 0, the log would give every forget of the last day again.
    await this.started;
    const before = this.forgetSeq;
    const { logged, trimmedThrough } = await this.timed(forgetLogAfter(this.sql, before));
    // Rows above what was read here are gone unread unless their notifications were heard:
    // read in the same statement as the rows, so a trim racing this read is seen by one or the other.
    if (trimmedThrough > before && !this.heardAll(before, trimmedThrough)) this.recheckOwed = true;
    let missed = 0;
    for (const { seq, id, target } of logged) {
      if (this.forgetSeqs.has(seq)) continue;
      // This process's own, whose commit has not returned yet: the store announces it then.
      if (this.ownForgets.has(id)) this.noteForgetSeq(seq);
      else {
        this.forgotten(target, seq);
        this.missedForgets.push(target);
        missed += 1;
      }
    }
    this.forgetSeq = Math.max(this.forgetSeq, logged.at(-1)?.seq ?? 0, trimmedThrough);
    if (missed > 0) this.logger.info({ forgets: missed }, 'applied forgets made while LISTEN was down');
    const floor = Math.min(this.highSeq - CATCH_UP_WINDOW, (this.published.smallest() ?? this.highSeq) - 1);
    let after = Math.max(0, floor);
    for (;;) {
      const mark = this.forgets.mark();
      const page = await this.timed(fetchAfterSeq(this.sql, after, BATCH));
      for (const { seq, entry } of page) {
        this.local.delete(seq);
        if (this.published.has(seq) && this.missedForgets.some((t) => forgetNames(t, entry))) {
          if (!this.forgets.namesSince(mark, entry)) this.announce(entry);
        } else this.publish(seq, entry, mark);
      }
      const last = page.at(-1);
      if (page.length < BATCH || !last) break;
      after = last.seq;
    }
    this.missedForgets = [];
    // After the versions missed, so what is held is as new as what the database holds, and only
    // what a forget removed (or a forget and a write afresh) differs.
    if (this.recheckOwed) {
      await this.recheck();
      this.recheckOwed = false;
    }
  }

  /** Announce a version read after `mark`, unless a forget heard since then names it (ForgetMarks). */
  private publish(seq: number, entry: Entry, mark: number): void {
    if (this.published.has(seq)) return;
    this.published.add(seq);
    this.highSeq = Math.max(this.highSeq, seq);
    if (!this.forgets.namesSince(mark, entry)) this.announce(entry);
  }

  /** Tell local subscribers of a version, noting it as handed to them (HeldEntries). */
  private announce(entry: Entry): void {
    this.hold(entry);
    this.changes.publish(entry);
  }

  /**
   * A version handed to this process's holders (announced, or read by a scan of the heads): noted
   * while anything that keeps what it is handed listens (HoldersFeed), for a check after an absence.
   */
  hold(entry: Entry): void {
    if (this.changes.holders > 0) this.held.hold(entry);
  }

  /** Every forget between `before` and `through` (trimmed from the log) was heard here by its notification. */
  private heardAll(before: number, through: number): boolean {
    if (through - before > FORGET_SEQS_KEPT) return false;
    for (let seq = before + 1; seq <= through; seq++) if (!this.forgetSeqs.has(seq)) return false;
    return true;
  }

  /**
   * Forgets may have been missed: their log rows were trimmed before this replica read them (its
   * LISTEN down, the process suspended, the network partitioned, for longer than the log keeps
   * them: DEFAULT_FORGET_LOG_KEEP_MS, forget.ts). Nothing says what they named, so what this
   * process handed its holders (HeldEntries) is checked against the database: each entry held at
   * a version it no longer stores (gone, or gone and written afresh since) is forgotten here, by
   * its address alone (every holder drops it, as for a forget heard), then its head, if it was
   * written afresh, announced again. A head merely newer than the version held is an ordinary
   * write, whose notification delivers it: nothing is forgotten for it. A seq skipped by a
   * forget that rolled back after taking it reads as a possible miss too: the check then finds
   * nothing gone, and announces no forget.
   */
  private async recheck(): Promise<void> {
    const started = performance.now();
    const stale = await this.held.stale(this.sql, this.timed);
    // Still held at the version found gone: one dropped or replaced since (a forget heard, a newer
    // version handed out, which the holders keep instead) needs no forget here.
    const gone = stale.filter((entry) => this.held.holds(entry));
    this.logger.warn(
      { gone: gone.length, held: this.held.size },
      'forgets may have been missed: the forget log was trimmed past what this replica had read (it was away longer than the log keeps them); dropping what it holds of entries forgotten since and reloading them from the database',
    );
    for (const { namespace, entity_path, key } of gone) {
      this.forgotten({ namespace, prefix: entity_path, key });
      this.reloading.push({ namespace, entity_path, key });
    }
    // Taken after those forgets: a version read below that a forget heard since names is not announced.
    const mark = this.forgets.mark();
    let announced = 0;
    // Entries dropped by a check that failed part way are reloaded by the next (a retried catch-up).
    while (this.reloading.length > 0) {
      const batch = this.reloading.slice(0, BATCH);
      for (const entry of await this.timed(readHeadsOf(this.sql, batch))) {
        if (this.forgets.namesSince(mark, entry)) continue;
        this.announce(entry);
        announced += 1;
      }
      this.reloading.splice(0, batch.length);
    }
    this.logger.info({ gone: gone.length, announced, ms: Math.round(performance.now() - started) }, 'reloaded what this replica holds after missed forgets');
  }
}
