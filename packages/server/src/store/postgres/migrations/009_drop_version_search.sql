-- Search reads cairn_search (005), one row per live head, whose terms come from the
-- application's own analyser. The tsvector generated on every version in 001 (an English
-- stemming pass over the whole value, and a GIN entry per term, for every version ever
-- written) is read by nothing, yet every append paid for it. Dropping the column drops its
-- index; existing rows keep their space until they are next rewritten or vacuumed.
drop index if exists cairn_versions_search;
alter table cairn_versions drop column if exists search;
drop function if exists cairn_tags_text(text[]);
