import { afterEach, describe, expect, it } from 'vitest';
import { BuiltinEmbedder } from '../../packages/server/src/embed/builtin-embedder.ts';

// A server warms the built-in embedder right after it starts listening (server.ts): its files
// are read a step per turn of the event loop, so that the first requests are answered
// meanwhile, and a request that needs them mid-way finishes the load there and then.

const open: BuiltinEmbedder[] = [];
const embedder = (): BuiltinEmbedder => {
  const made = new BuiltinEmbedder();
  open.push(made);
  return made;
};

afterEach(async () => {
  await Promise.all(open.splice(0).map((e) => e.close()));
});

describe('the built-in embedder warming up', () => {
  it('lets the event loop turn between its steps', async () => {
    let turns = 0;
    let warming = true;
    const turn = () => {
      if (!warming) return;
      turns += 1;
      setImmediate(turn);
    };
    setImmediate(turn);
    await embedder().warm();
    warming = false;
    // The word table, the lexical graph, the retrofitted vectors, the acronyms: a turn between each.
    expect(turns).toBeGreaterThanOrEqual(3);
  });

  it('is finished by a use in the middle, which gets what a cold load gives', async () => {
    const warmed = embedder();
    const warming = warmed.warm();
    // The first step (the word table) has run; the lexicon has not.
    const query = 'physician rotated the TLS certificate before the deploy';
    const [mid] = await warmed.embed([query]);
    const related = warmed.relatedWords(query);
    await warming;

    const cold = embedder();
    const [expected] = await cold.embed([query]);
    expect(mid).toEqual(expected);
    expect(related).toEqual(cold.relatedWords(query));
    expect(related.length).toBeGreaterThan(0);
    // And the load is not done twice over: the warmed embedder still answers the same.
    expect((await warmed.embed([query]))[0]).toEqual(expected);
  });
});
