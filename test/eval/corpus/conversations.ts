import { type EvalEntry, type EvalQuery, pick, random } from './model.ts';

/**
 * The conversational set: long multi-session chats between two people, one entry per turn
 * (`{ speaker, date, text }`), as a companion app or a meeting bot stores them. Each question
 * is asked within one conversation (scoped to its entity path) about one of its speakers, in
 * the asker's words rather than the turn's; some answers need two turns from different
 * sessions. Kinds: fact (one turn), when (a date question), opinion ("what does X think
 * about"), two-turn (both turns expected).
 */

/** One thing a speaker tells over the conversation, and how someone later asks about it. */
interface Fact {
  /** What the speaker says, first person; two turns for a two-turn fact (said sessions apart). */
  said: [string] | [string, string];
  /** The question, `{N}` standing for the speaker's name. */
  ask: string;
  /** Something either speaker says on the same topic that does not answer the question. */
  near: string;
  kind: 'fact' | 'when' | 'opinion' | 'two-turn';
}

const FACTS: Fact[] = [
  { said: ['We finally adopted a rescue puppy last weekend, a beagle we named Biscuit.'], ask: 'What kind of dog does {N} have?', near: 'My neighbour’s puppy chewed through my shoelaces this morning.', kind: 'fact' },
  { said: ['I got the offer! I start as a nurse at the children’s hospital next month.'], ask: 'Where did {N} get a job offer?', near: 'My aunt worked at a hospital for thirty years before she retired.', kind: 'fact' },
  { said: ['I signed up for cello lessons, my teacher is incredibly patient with me.', 'Played in my first recital yesterday, my hands were shaking the whole time.'], ask: 'Which instrument did {N} play at the recital?', near: 'I used to play the piano as a kid but I gave up on lessons.', kind: 'two-turn' },
  { said: ['Just got back from Lisbon, the pastries alone were worth the flight.'], ask: 'When did {N} go on holiday to Portugal?', near: 'I would love to travel somewhere with good pastries this year.', kind: 'when' },
  { said: ['Honestly I think remote work is overrated, I miss bumping into people at the office.'], ask: 'What does {N} think about working from home?', near: 'My manager keeps changing the office days, it is confusing.', kind: 'opinion' },
  { said: ['I have been running every morning to get ready for the city marathon in October.', 'I finished the marathon in four hours and twelve minutes!'], ask: 'How did {N} train for the marathon, and what was the finishing time?', near: 'I watched the marathon on TV, those runners are unreal.', kind: 'two-turn' },
  { said: ['That novel you lent me was beautiful but so sad, I cried at the last chapter.'], ask: 'What did {N} think of the novel they were lent?', near: 'I am looking for a new novel to read, any tips?', kind: 'opinion' },
  { said: ['We are moving to a bigger apartment across town on the first of May.'], ask: 'When is {N} relocating to a new flat?', near: 'Apartment prices across town have gone completely mad.', kind: 'when' },
  { said: ['Turns out I am allergic to peanuts, so no more satay for me.'], ask: 'What food does {N} have to avoid now?', near: 'I made satay for dinner last week, turned out great.', kind: 'fact' },
  { said: ['My sister Ana just got engaged to her boyfriend of six years.', 'The wedding was lovely, Ana cried through her whole speech.'], ask: 'Whose wedding did {N} go to, and how long had the couple been together before the engagement?', near: 'My friend’s wedding is in June, I still need an outfit.', kind: 'two-turn' },
  { said: ['My tomatoes are finally ripening, the balcony garden was worth all the effort.'], ask: 'What is {N} growing on the balcony?', near: 'The supermarket tomatoes have no taste at all lately.', kind: 'fact' },
  { said: ['The car broke down on the highway again, I think it is time to sell it.'], ask: 'What trouble has {N} had with their vehicle?', near: 'I got stuck in a huge jam on the highway on Friday.', kind: 'fact' },
  { said: ['I really do not like the new neighbours, they play loud music until three in the morning.'], ask: 'What does {N} think of the neighbours?', near: 'Our neighbours’ cat keeps sleeping on our doorstep.', kind: 'opinion' },
  { said: ['I enrolled in an evening pottery class, it starts next Tuesday.'], ask: 'When does {N}’s pottery class start?', near: 'My mum took a painting class last year and loved it.', kind: 'when' },
  { said: ['Our daughter Lily lost her first tooth today, she was so proud of herself.'], ask: 'What happened to {N}’s kid recently?', near: 'My nephew is starting school in September.', kind: 'fact' },
  { said: ['I sprained my ankle playing basketball, so I am on crutches for two weeks.'], ask: 'How did {N} get injured?', near: 'I watched a basketball game with my brother last night.', kind: 'fact' },
  { said: ['I have been baking sourdough every Sunday, my starter is called Doug.'], ask: 'What does {N} bake every weekend?', near: 'That bakery near the station has amazing bread.', kind: 'fact' },
  { said: ['I started volunteering at the animal shelter on Saturdays.', 'One of the cats I have been looking after finally got adopted today!'], ask: 'Where does {N} volunteer, and what good news came from it?', near: 'The animal shelter near us is looking for donations.', kind: 'two-turn' },
  { said: ['The new space opera at the cinema was stunning, but the ending dragged on far too long.'], ask: 'What was {N}’s opinion of the film they saw?', near: 'I have not been to the cinema in ages.', kind: 'opinion' },
  { said: ['My grandmother turned ninety on Saturday, the whole family came over for cake.'], ask: 'When was the birthday party for {N}’s grandma?', near: 'My grandmother still bakes a cake for every birthday in the family.', kind: 'when' },
  { said: ['I have been practising Japanese with an app, I can almost read a menu now.'], ask: 'Which language is {N} learning with an app?', near: 'I always wanted to learn a language but never found the time.', kind: 'fact' },
  { said: ['I applied for the team lead position, fingers crossed.', 'I got the promotion! I will be managing five people from next month.'], ask: 'Did {N} get the team lead position, and how many people will they manage?', near: 'Our team lead is leaving next month, nobody knows who replaces her.', kind: 'two-turn' },
  { said: ['We saw the band live at the stadium last night, the light show was incredible.'], ask: 'When did {N} see a band play live?', near: 'The stadium near us is so loud on match nights.', kind: 'when' },
  { said: ['I love living by the sea, the air just feels cleaner here.'], ask: 'How does {N} feel about life on the coast?', near: 'I could never live by the sea, too windy for me.', kind: 'opinion' },
];

/** Small talk between the facts: greetings, reactions, plans, some touching the same topics. */
const CHATTER = [
  'Hey! How has your week been?',
  'Pretty busy, work has been non-stop.',
  'Haha that sounds exactly like my Monday.',
  'Did you watch the match on Sunday?',
  'No, I fell asleep on the sofa before it started.',
  'We should grab coffee sometime next week.',
  'Definitely, Thursday works for me.',
  'The weather has been awful, it rained all weekend.',
  'I know, I did not leave the house once.',
  'My cousin sends me photos of her cat every single day.',
  'I tried a new recipe last night, it was a disaster.',
  'What did you end up cooking?',
  'Some kind of curry, far too spicy.',
  'I need a holiday so badly.',
  'Same, maybe somewhere warm in spring.',
  'Have you read anything good lately?',
  'Not really, I keep starting books and never finishing them.',
  'My phone screen cracked again, third time this year.',
  'You should get a proper case for it.',
  'The traffic this morning was unbelievable.',
  'I took the train instead, much calmer.',
  'Are you going to the party on Friday?',
  'Probably, if I am not too tired.',
  'I have been sleeping badly, too much on my mind.',
  'Try leaving the phone in another room at night.',
  'Our landlord finally fixed the heating.',
  'That only took them three months.',
  'I started watching a documentary series about the ocean.',
  'Is it any good? I need something new to watch.',
  'My brother is visiting next weekend with the kids.',
  'That will be a lively weekend then.',
  'Work wants us back in the office two days a week.',
  'I went for a long walk in the park this morning.',
  'The new cafe on the corner makes great croissants.',
  'I should really call my parents more often.',
  'Did you finish that puzzle you were working on?',
  'Almost, the sky part is impossible.',
  'I am thinking of repainting the living room.',
  'What colour are you going for?',
  'Something light, maybe a pale green.',
  'Talk soon, I have to run!',
  'Good night, speak tomorrow.',
];

const REACTIONS = [
  'Oh wow, that is amazing!',
  'No way, tell me more.',
  'Oh no, I am so sorry to hear that.',
  'That is so exciting, congratulations!',
  'Haha, I can totally picture that.',
  'Really? I did not expect that at all.',
  'That sounds lovely.',
  'Fair enough, I can see why.',
];

const PAIRS: [string, string][] = [
  ['Maya', 'Tom'],
  ['Priya', 'Daniel'],
  ['Sofia', 'Kenji'],
  ['Amara', 'Lukas'],
];

const SESSIONS = 12;
const TURNS_PER_SESSION = 18;
const FACTS_PER_CONVERSATION = 14;
const DAY_MS = 86_400_000;

const shuffled = <T>(rand: () => number, items: readonly T[]): T[] => {
  const out = [...items];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(rand() * (i + 1));
    [out[i], out[j]] = [out[j] as T, out[i] as T];
  }
  return out;
};

export const conversations = (): { entries: EvalEntry[]; queries: EvalQuery[] } => {
  const rand = random(20261125);
  const entries: EvalEntry[] = [];
  const queries: EvalQuery[] = [];
  PAIRS.forEach((pair, c) => {
    const path = `conversations/${pair[0].toLowerCase()}-${pair[1].toLowerCase()}`;
    const facts = shuffled(rand, FACTS).slice(0, FACTS_PER_CONVERSATION);
    // Each fact's turns go to sessions: the first anywhere, a second at least two sessions later.
    const planned = new Map<number, { fact: number; part: number }[]>();
    facts.forEach((fact, f) => {
      const first = Math.floor(rand() * (fact.said.length > 1 ? SESSIONS - 3 : SESSIONS));
      const sessions = fact.said.length > 1 ? [first, first + 2 + Math.floor(rand() * (SESSIONS - first - 2))] : [first];
      sessions.forEach((s, part) => planned.set(s, [...(planned.get(s) ?? []), { fact: f, part }]));
      // The same topic without the answer, in another session.
      const aside = (first + 1 + Math.floor(rand() * (SESSIONS - 1))) % SESSIONS;
      planned.set(aside, [...(planned.get(aside) ?? []), { fact: f, part: -1 }]);
    });
    const speakerOf = facts.map(() => Math.floor(rand() * 2));
    const keysOf = facts.map((): string[] => []);
    let turn = 0;
    let date = Date.UTC(2025, 0, 6) + c * 9 * DAY_MS;
    for (let s = 0; s < SESSIONS; s++) {
      date += (4 + Math.floor(rand() * 14)) * DAY_MS;
      const day = new Date(date).toISOString().slice(0, 10);
      const told = planned.get(s) ?? [];
      // Where in the session each fact is told: spread between the small talk.
      const slots = new Map<number, { fact: number; part: number }>();
      const free = shuffled(rand, Array.from({ length: TURNS_PER_SESSION - 3 }, (_, i) => i + 1));
      for (const t of told) {
        const at = free.find((i) => !slots.has(i) && !slots.has(i - 1) && !slots.has(i + 1)) ?? free.find((i) => !slots.has(i)) ?? 1;
        slots.set(at, t);
      }
      let reactFor: number | null = null;
      for (let t = 0; t < TURNS_PER_SESSION; t++) {
        const plan = slots.get(t);
        let speaker = t % 2;
        let text: string;
        if (plan && plan.part < 0) {
          speaker = Math.floor(rand() * 2);
          text = (facts[plan.fact] as Fact).near;
        } else if (plan) {
          speaker = speakerOf[plan.fact] as number;
          text = (facts[plan.fact] as Fact).said[plan.part] as string;
          keysOf[plan.fact]!.push(`${path}/turn-${String(turn).padStart(4, '0')}`);
          reactFor = 1 - speaker;
        } else if (reactFor !== null) {
          speaker = reactFor;
          text = pick(rand, REACTIONS);
          reactFor = null;
        } else {
          text = pick(rand, CHATTER);
        }
        entries.push({
          entity_path: path,
          key: `turn-${String(turn).padStart(4, '0')}`,
          value: { speaker: pair[speaker] as string, date: day, session: s + 1, text },
          event_type: 'conversation.turn',
        });
        turn += 1;
      }
    }
    facts.forEach((fact, f) => {
      const name = pair[speakerOf[f] as number] as string;
      queries.push({ query: fact.ask.replaceAll('{N}', name), kind: fact.kind, expected: keysOf[f] as string[], scope: path });
    });
  });
  return { entries, queries };
};
