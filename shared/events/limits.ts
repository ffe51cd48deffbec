/**
 * The longest each text field of an event may be, in characters (code points): checked
 * wherever an event is written (the events API, smart-link submissions and their queued
 * jobs, extraction's answers) and documented in the OpenAPI document from those checks.
 */
export const EVENT_TEXT_CHARS = {
  title: 255,
  internal_name: 255,
  series_title: 255,
  location: 255,
  description: 50000,
} as const;
