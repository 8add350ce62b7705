-- Which text analysis made each search row's terms (ANALYSIS_VERSION in
-- src/search-rules/analyzer.ts). Rows written before this column were made by the first. A
-- row of an older analysis is analysed again by the search indexer's sweep, at start and every
-- five minutes (search-rows.ts staleHeads), keeping its vector: its content did not change.
-- A new column with a constant default takes no table rewrite.
alter table cairn_search add column if not exists analysis smallint not null default 1;
