/** An input the service refuses to treat as media; `reason` is shown to operators as is. */
export class ImageRejected extends Error {
  constructor(readonly reason: string) {
    super(reason);
    this.name = 'ImageRejected';
  }
}
