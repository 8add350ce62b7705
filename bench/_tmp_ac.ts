import autocannon from 'autocannon';
const url = process.argv[2];
for (let i = 0; i < 1000; i++) await fetch(url + '/api/v1/entries', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ entity_path: 'bench/reads', key: `r-${i}`, value: {a:'x'.repeat(900)} }) });
const r = await autocannon({ url, duration: 5, connections: 50,
  requests: [{ method: 'GET', setupRequest: (req) => ({ ...req, path: `/api/v1/entries/bench/reads/r-${Math.floor(Math.random()*1000)}` }) }] });
console.log('read', r.requests.average, r.non2xx);
let n = 0;
const w = await autocannon({ url, duration: 5, connections: 50,
  requests: [{ method: 'POST', path: '/api/v1/entries', headers: { 'content-type': 'application/json' }, setupRequest: (req) => ({ ...req, body: JSON.stringify({ entity_path: 'bench/writes', key: `k-${n++}`, value: {a:'x'.repeat(900)} }) }) }] });
console.log('write', w.requests.average, w.non2xx);
