/**
 * Every blob key the service writes or reads, built here alone: the areas of the data root (the
 * folder adapter keeps each key inside its area, lib/blobs/folder.ts) and the key of each thing
 * stored in them.
 */

/** The submitted images and the registry file, as the contract lays them out (`images/<name>`). */
export const SUBMISSIONS_AREA = 'submissions/';
export const IMAGES_PREFIX = `${SUBMISSIONS_AREA}images/`;
export const REGISTRY_KEY = `${SUBMISSIONS_AREA}submissions.json`;
/** Downloaded candidates and captured pages, per submission; swept by retention. */
export const EVIDENCE_AREA = 'evidence/';
/** The metadata-free copies that went to web detection; swept by retention. */
export const DERIVED_AREA = 'derived/';
export const THUMBS_AREA = 'thumbs/';

/** A submitted file (`file` is the contract's `images/<name>`, as stored on the submission). */
export const submissionKey = (file: string) => `${SUBMISSIONS_AREA}${file}`;

export const thumbnailKey = (submissionId: string) => `${THUMBS_AREA}${submissionId}.jpg`;

export const derivedKey = (submissionId: string, format: string) => `${DERIVED_AREA}${submissionId}.${format === 'png' ? 'png' : 'jpg'}`;

/** A downloaded candidate image, named by its content (`name` is its hash and extension). */
export const evidenceMediaKey = (submissionId: string, name: string) => `${EVIDENCE_AREA}${submissionId}/${name}`;

/** A captured page of a matched result, named by its content. */
export const capturedPageKey = (submissionId: string, name: string) => evidenceMediaKey(submissionId, `pages/${name}`);
