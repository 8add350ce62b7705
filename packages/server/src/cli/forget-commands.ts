import { type Command, InvalidArgumentError } from 'commander';
import { action, common } from './client-commands.ts';

const whole = (value: string): number => {
  if (!/^\d+$/.test(value) || Number(value) < 1) throw new InvalidArgumentError('expected a whole number ≥ 1');
  return Number(value);
};

const days = (value: string): number => {
  const n = Number(value);
  if (value.trim() === '' || !Number.isFinite(n) || n < 0) throw new InvalidArgumentError('expected a number of days ≥ 0');
  return n;
};

/** `{ [name]: value }` when the option or argument was given at all (an empty string too), else `{}`. */
const given = <K extends string>(name: K, value: unknown): { [P in K]?: string } =>
  (value === undefined ? {} : { [name]: value as string }) as { [P in K]?: string };

/** `cairn forget` and `cairn retention …`: the admin operations that remove history. */
export const registerForgetCommands = (program: Command): void => {
  common(program.command('forget').description('remove an entry, or everything under a path, with all versions, everywhere (admin; irreversible)'))
    .argument('<entity_path>', 'every entry at or under this path (or, with --key, the one entry there)')
    .option('--key <key>', 'only this entry')
    .option('--reason <text>', 'why, for the audit log (never the content)')
    .option('--yes', 'confirm: nothing is removed without it')
    .action(action(async (client, o, entityPath: string) => {
      if (o.yes !== true) throw new InvalidArgumentError(`forgetting ${entityPath}${o.key !== undefined ? ` / ${o.key as string}` : ' and everything under it'} cannot be undone: add --yes`);
      // Every option given is sent, an empty one too, for the server to refuse (422): dropped,
      // `--key ""` forgot the whole path and `--namespace ""` the default namespace's entries.
      const result = await client.forget({
        entity_path: entityPath,
        ...given('key', o.key),
        ...given('reason', o.reason),
        ...given('namespace', o.namespace),
      });
      const lines = result.forgotten.map((a) => `forgot ${a.entity_path} / ${a.key}`);
      return { json: result, text: [...lines, `${result.forgotten.length} entries forgotten, ${result.derived_removed} Cortex records removed`].join('\n') };
    }));

  const retention = program.command('retention').description('retention policies: how many versions, or how many days of history, to keep (admin)');
  common(retention.command('list').description("the namespace's policies"))
    .action(action(async (client, o) => {
      const policies = await client.retentionPolicies(given('namespace', o.namespace));
      const text = policies.map((p) => `${p.entity_path ?? '(whole namespace)'}: ${[p.keep_versions !== null ? `newest ${p.keep_versions} versions` : '', p.keep_days !== null ? `${p.keep_days} days` : ''].filter(Boolean).join(' or ')}`);
      return { json: { policies }, text: text.length > 0 ? text.join('\n') : 'no retention policies: every version is kept' };
    }));
  common(retention.command('set').description('set the policy of a path prefix (or of the whole namespace)'))
    .argument('[entity_path]', 'entries at or under this path; nothing: the whole namespace')
    .option('--keep-versions <n>', 'keep the newest N versions', whole)
    .option('--keep-days <d>', 'keep versions written in the last D days', days)
    .action(action(async (client, o, entityPath: string | undefined) => {
      if (o.keepVersions === undefined && o.keepDays === undefined) throw new InvalidArgumentError('give --keep-versions, --keep-days or both');
      // The whole namespace's policy is the one with no path: an empty path is sent, and refused.
      const policy = await client.setRetentionPolicy({
        ...given('entity_path', entityPath),
        ...(o.keepVersions !== undefined ? { keep_versions: o.keepVersions as number } : {}),
        ...(o.keepDays !== undefined ? { keep_days: o.keepDays as number } : {}),
        ...given('namespace', o.namespace),
      });
      return { json: policy, text: `retention set for ${policy.entity_path ?? 'the whole namespace'}` };
    }));
  common(retention.command('delete').description('remove a policy (history is kept again from now on)'))
    .argument('[entity_path]', 'the policy\'s path; nothing: the whole-namespace policy')
    .action(action(async (client, o, entityPath: string | undefined) => {
      await client.deleteRetentionPolicy({ ...given('entity_path', entityPath), ...given('namespace', o.namespace) });
      return { json: { deleted: true }, text: `retention policy removed for ${entityPath ?? 'the whole namespace'}` };
    }));
  common(retention.command('run').description('run a retention pass now (drop, compact, expire old dedup records and audit batches)'))
    .action(action(async (client) => {
      const run = await client.runRetention();
      return { json: run, text: `${run.versions_dropped} versions dropped from ${run.entries_checked} entries, ${run.dedup_expired} dedup records and ${run.audit_expired} audit batches expired, in ${run.ms} ms` };
    }));
};
