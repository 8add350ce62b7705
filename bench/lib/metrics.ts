/** A gauge or counter from a `/metrics` scrape; -1 when absent. */
export const metric = (text: string, name: string): number => Number(new RegExp(`^${name} (\\d+)`, 'm').exec(text)?.[1] ?? -1);

/** Scrapes `/metrics` every 250 ms until `done` says so; fails after `minutes` with `what`. */
export const waitForMetrics = async (url: string, minutes: number, what: string, done: (text: string) => boolean): Promise<void> => {
  for (const deadline = Date.now() + minutes * 60_000; Date.now() < deadline; ) {
    if (done(await (await fetch(`${url}/metrics`)).text())) return;
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  throw new Error(`${what} within ${minutes} minutes`);
};
