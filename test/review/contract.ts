/** The API's records, as the product defines them: tests parse answers with the same schemas. */
export {
  AuditEventRecord,
  ErrorBody,
  EvidenceRecord,
  KnowledgeEntryRecord,
  ProviderHealthRecord,
  ProviderRecord,
  SubmissionRecord,
} from '../../lib/api/records.js';
