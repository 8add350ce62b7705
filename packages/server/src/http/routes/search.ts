import type { SearchResponse } from 'cairn-memory-client';
import { z } from 'zod';
import type { Expect, SameUnion } from '../../domain/type-checks.ts';
import { EntrySchema } from '../../services/schemas.ts';
import { SearchInput, searchEntries } from '../../services/search-entries.ts';
import { contextOf } from '../context.ts';
import { ErrorResponse } from './error-schema.ts';
import type { RoutePlugin } from '../http-context.ts';

const Highlight = z.object({
  field: z.string().describe('Where the words matched: entity_path, key, tags, value, or value.<field> inside a JSON value.'),
  fragment: z.string(),
  matches: z.array(z.tuple([z.number(), z.number()])).describe('[start, end) offsets of each matching word in fragment.'),
});

const Parts = z.object({
  text: z.object({ rank: z.number(), score: z.number() }).nullable().describe('Place and BM25F score in the full-text ranking.'),
  vector: z.object({ rank: z.number(), similarity: z.number() }).nullable().describe('Place and cosine similarity in the vector ranking.'),
  words: z.object({ rank: z.number(), similarity: z.number() }).optional().describe('Place and similarity in the word-by-word ranking (the built-in lexicon, on unless CAIRN_SEARCH_LEXICON=off beside a sentence model; hybrid only).'),
  relevance: z.number().describe('Hybrid: the weighted sum of each ranking\'s score rescaled between its worst and best candidate (reciprocal rank fusion with CAIRN_SEARCH_PROFILE=v1); one ranking: the score relative to the best.'),
  recency: z.number().describe('Multiplier for how recently the entry was written (0.95–1).'),
  confidence: z.number().describe('Multiplier for the entry confidence (0.9–1).'),
});

const SearchResult = z.object({ entry: EntrySchema, score: z.number(), parts: Parts, highlights: z.array(Highlight) });

export const SearchResponseSchema = z.object({
  results: z.array(SearchResult),
  tried_and_failed: z
    .array(SearchResult)
    .optional()
    .describe('With discredited=apart: matching entries whose recorded outcomes discredit them, ranked the same way, kept out of results.'),
  mode: z.enum(['hybrid', 'text', 'vector']).describe('The rankings used: hybrid answers by text alone while no vector can be had.'),
  corrections: z
    .array(z.object({ typed: z.string(), searched: z.string() }))
    .optional()
    .describe('Words taken for misspellings (unknown to the lexicon, held by no entry), searched as the word of the lexicon one letter away that the most entries hold. Absent when none was.'),
});

// What is documented is what the client reads: a field added to one and not the other is a type error.
type _Documented = Expect<SameUnion<z.output<typeof SearchResponseSchema>, SearchResponse>>;

/** POST /api/v1/search (SPEC §5). */
export const searchRoutes: RoutePlugin = async (app, { deps, config }) => {
  app.post(
    '/api/v1/search',
    {
      schema: {
        summary: 'Search live entries by text, by meaning, or both (hybrid)',
        tags: ['search'],
        body: SearchInput,
        response: { 200: SearchResponseSchema, ...ErrorResponse },
      },
    },
    async (request) => searchEntries(deps, contextOf(request, config), request.body),
  );
};
