import type { DerivedImage } from '../images/derived.js';
import type { ImageService } from '../ports.js';

/**
 * The only image that may leave the service: a derived copy (decoded and re-encoded, so EXIF/GPS
 * and other metadata are gone). The brand makes the web-detection client refuse, at compile time,
 * raw submission bytes or any object that did not come out of `approveForVision`.
 */

declare const approvedImageBrand: unique symbol;

export type ApprovedImage = DerivedImage & { readonly [approvedImageBrand]: true };

/** Derives the copy that may be sent to the web-detection service (a whole image or a face crop). */
export async function approveForVision(images: ImageService, bytes: Buffer): Promise<ApprovedImage> {
  return (await images.derive(bytes)) as ApprovedImage;
}
