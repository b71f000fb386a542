/** 1-based line and column, computed only when a diagnostic is printed. */
export interface Position {
  readonly line: number;
  readonly column: number;
}

/** Maps offsets of one text to lines and columns, with a binary search over line starts. */
export class LineIndex {
  private readonly starts: number[] = [0];

  constructor(readonly text: string) {
    for (let i = 0; i < text.length; i++) if (text.charCodeAt(i) === 10) this.starts.push(i + 1);
  }

  position(offset: number): Position {
    const clamped = Math.max(0, Math.min(offset, this.text.length));
    let lo = 0;
    let hi = this.starts.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (this.starts[mid]! <= clamped) lo = mid;
      else hi = mid - 1;
    }
    return { line: lo + 1, column: clamped - this.starts[lo]! + 1 };
  }

  /** The text of a 1-based line, without its line break. */
  lineText(line: number): string {
    const start = this.starts[line - 1];
    if (start === undefined) return "";
    return this.text.slice(start, start + this.lineLength(line));
  }

  /** Offset of the first character of a 1-based line (the text's length past the last line). */
  lineStart(line: number): number {
    return this.starts[line - 1] ?? this.text.length;
  }

  /** Length of a 1-based line without its line break (`\n` or `\r\n`); 0 past the last line. */
  lineLength(line: number): number {
    const start = this.starts[line - 1];
    if (start === undefined) return 0;
    const next = this.starts[line];
    let end = next === undefined ? this.text.length : next - 1;
    if (end > start && this.text.charCodeAt(end - 1) === 13) end--;
    return end - start;
  }

  get lineCount(): number {
    return this.starts.length;
  }
}
