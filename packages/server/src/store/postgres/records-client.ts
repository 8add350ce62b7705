import postgres from 'postgres';
import type { RecordStore } from '../../ports/records.ts';
import * as records from './records.ts';

/**
 * The shared records alone on one short-lived connection, without migrating or listening:
 * enough to read a heartbeat quickly (`cairn cortex --health`). The table must exist, which
 * it does once any server has started on the database.
 */
export const postgresRecords = (dsn: string): { records: RecordStore; close(): Promise<void> } => {
  const sql = postgres(dsn, { max: 1, connect_timeout: 3, onnotice: () => {}, connection: { application_name: 'cairn-health', statement_timeout: 3000 } });
  return {
    records: {
      getRecord: (collection, id) => records.getRecord(sql, collection, id),
      createRecord: (collection, id, data) => records.createRecord(sql, collection, id, data),
      putRecord: (collection, id, data) => records.putRecord(sql, collection, id, data),
      replaceRecord: (collection, id, expected, data) => records.replaceRecord(sql, collection, id, expected, data),
      deleteRecord: (collection, id) => records.deleteRecord(sql, collection, id),
      listRecords: (collection, query) => records.listRecords(sql, collection, query),
    },
    close: () => sql.end({ timeout: 1 }),
  };
};
