/**
 * Deletes of one record that overlap within this process answer as if they had run one after
 * another: the one that removes it says so, and one that arrives while it is under way waits
 * for it and then says the record was gone. Without it, each read the record as there before
 * either removed it, and both answered true (two racing DELETEs of a team both 204). Only
 * within a process: between replicas sharing a bucket, the bucket decides (record-objects.ts).
 */
export class DeletesInFlight {
  private readonly running = new Map<string, Promise<boolean>>();

  /**
   * Delete the record `key` names: `exists` reads whether it is there, `remove` removes it,
   * answering false when it found the record gone after all (another process sharing the
   * store removed it in between: S3 replicas). Resolves true when this call removed it.
   */
  async delete(key: string, exists: () => boolean | Promise<boolean>, remove: () => Promise<boolean | void>): Promise<boolean> {
    for (let under = this.running.get(key); under; under = this.running.get(key)) {
      // The one under way removed it: gone. It found nothing or failed: look again.
      if (await under.catch(() => false)) return false;
    }
    const run = (async () => {
      if (!(await exists())) return false;
      return (await remove()) !== false;
    })();
    this.running.set(key, run);
    try {
      return await run;
    } finally {
      if (this.running.get(key) === run) this.running.delete(key);
    }
  }
}
