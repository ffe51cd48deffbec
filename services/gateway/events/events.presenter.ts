import { eventLinks } from '../calendar/platforms';
import type { EventWithCalendar } from '../../../shared/events/event-rows';
import { toEventJson } from '../../../shared/events/event-json';
import { HTML_LABELS, htmlSnippets } from './event-snippets';

/** `{data, links, html[, html_snippets]}` of a single-event answer. */
export function toSingleEventJson(found: EventWithCalendar, baseUrl: string, withHtml: boolean) {
  const data = toEventJson(found, baseUrl);
  const links = eventLinks(data.public_url);
  return {
    data,
    links,
    html: { ...HTML_LABELS },
    ...(withHtml ? { html_snippets: htmlSnippets(data.title, links) } : {}),
  };
}
