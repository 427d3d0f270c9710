export { createDynamoDbReportStore, MAX_REPORT_BYTES, ReportTooLargeError, type DynamoDbReportStoreOptions } from './dynamodb.js';
export { createFileReportStore } from './file.js';
export { reportStoreFromEnvironment } from './from-environment.js';
export { createMemoryReportStore } from './memory.js';
export { keepsResource, retainedChange } from './retained.js';
export { PendingEventsSchema, reportTime, RESOURCE_ID, StoredReportPartSchema, StoredReportSchema, type ReportStore, type StoredReport, type StoredReportPart } from './store.js';
export { noteRefusal, recordsRefusal, REFUSAL_RECORD_INTERVAL_MS, refusalOf, RefusalSchema, type Refusal } from './refusals.js';
export { checkFingerprint, FINGERPRINT, noteVerified, recordsVerification, VERIFIED_RECORD_INTERVAL_MS, VerifiedBySchema, type VerifiedBy } from './verified-by.js';
