/**
 * Whether people in a zone write numeric dates day first ("12/05/2026" is 12 May in
 * London, 5 December in New York). Month-first is the habit of the United States and its
 * territories, English-speaking Canada and the Philippines; nearly everywhere else writes
 * the day first. UTC says nothing about the writer, so chrono's default (month first) stays.
 */
const MONTH_FIRST = new Set([
  'America/New_York', 'America/Detroit', 'America/Chicago', 'America/Menominee', 'America/Denver', 'America/Boise',
  'America/Phoenix', 'America/Los_Angeles', 'America/Anchorage', 'America/Juneau', 'America/Sitka',
  'America/Metlakatla', 'America/Yakutat', 'America/Nome', 'America/Adak', 'America/Indianapolis',
  'America/Fort_Wayne', 'America/Louisville', 'America/Knox_IN', 'America/Shiprock', 'Navajo', 'Pacific/Honolulu',
  'America/Puerto_Rico', 'America/St_Thomas', 'Pacific/Guam', 'Pacific/Saipan', 'Pacific/Pago_Pago',
  'EST5EDT', 'CST6CDT', 'MST7MDT', 'PST8PDT', 'EST', 'MST', 'HST',
  'America/Toronto', 'America/Vancouver', 'America/Edmonton', 'America/Winnipeg', 'America/Halifax',
  'America/St_Johns', 'America/Regina', 'America/Moncton', 'America/Glace_Bay', 'America/Goose_Bay',
  'America/Whitehorse', 'America/Dawson', 'America/Dawson_Creek', 'America/Fort_Nelson', 'America/Creston',
  'America/Iqaluit', 'America/Rankin_Inlet', 'America/Resolute', 'America/Cambridge_Bay', 'America/Inuvik',
  'America/Swift_Current', 'America/Atikokan', 'America/Montreal', 'America/Nipigon', 'America/Thunder_Bay',
  'America/Rainy_River', 'America/Yellowknife', 'America/Pangnirtung',
  'Asia/Manila',
]);

export function writesDayFirst(zone: string): boolean {
  if (zone === 'UTC' || zone === 'GMT' || zone.startsWith('Etc/')) return false;
  if (/^(US|Canada)\//.test(zone) || /^America\/(Indiana|Kentucky|North_Dakota)\//.test(zone)) return false;
  return !MONTH_FIRST.has(zone);
}
