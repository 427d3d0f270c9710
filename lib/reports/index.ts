export { createDynamoDbReportStore, MAX_REPORT_BYTES, ReportTooLargeError, type DynamoDbReportStoreOptions } from './dynamodb.js';
export { createFileReportStore } from './file.js';
export { reportStoreFromEnvironment } from './from-environment.js';
export { createMemoryReportStore } from './memory.js';
export { PendingEventsSchema, StoredReportPartSchema, StoredReportSchema, type ReportStore, type StoredReport, type StoredReportPart } from './store.js';
