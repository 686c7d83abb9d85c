/** A snapshot cannot be restored with the provided implementations (SPEC R13): say what is missing. */
export class RestoreError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "RestoreError";
  }
}
