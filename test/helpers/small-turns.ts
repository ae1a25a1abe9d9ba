import sharp from 'sharp';

/**
 * Small turns as editors and social apps make them (issue 29 item 3): the picture turned by a few
 * degrees on a canvas that grows to hold it, the corner wedges black, white, or a blurred copy of
 * the picture stretched over the canvas. Shared by the internal-copies test and bench/small-turns.ts.
 */
export type Corners = 'black' | 'white' | 'blurred';
export const CORNERS: Corners[] = ['black', 'white', 'blurred'];

export async function turnedOn(photo: Buffer, degrees: number, corners: Corners): Promise<Buffer> {
  if (corners !== 'blurred')
    return sharp(photo)
      .rotate(degrees, { background: corners === 'black' ? '#000000' : '#ffffff' })
      .jpeg({ quality: 90 })
      .toBuffer();
  const picture = await sharp(photo)
    .ensureAlpha()
    .rotate(degrees, { background: { r: 0, g: 0, b: 0, alpha: 0 } })
    .png()
    .toBuffer();
  const { width, height } = await sharp(picture).metadata();
  const ground = await sharp(photo).resize(width, height, { fit: 'cover' }).blur(24).toBuffer();
  return sharp(ground)
    .composite([{ input: picture }])
    .jpeg({ quality: 90 })
    .toBuffer();
}
