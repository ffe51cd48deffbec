/**
 * Trimming a run of characters off one end of a text, in one pass. The patterns this
 * replaces (`/[.,;]+$/`) are tried from every character of a run, each attempt reading to
 * the run's end: a long run followed by anything else cost its length squared.
 *
 * `char` tests one character (`/[.,;:]/`, `/\s/`); it must not have the g or y flag, whose
 * lastIndex would carry over from one test to the next.
 */
export function trimEndOf(text: string, char: RegExp): string {
  let end = text.length;
  while (end > 0 && char.test(text[end - 1])) end--;
  return end === text.length ? text : text.slice(0, end);
}

export function trimStartOf(text: string, char: RegExp): string {
  let start = 0;
  while (start < text.length && char.test(text[start])) start++;
  return start === 0 ? text : text.slice(start);
}
