// A bundle of its own, loaded by the first page that shows Markdown. Answers rendered as Markdown: marked to HTML, DOMPurify to what is safe to insert. Links open
// outside the dashboard; nothing loads from elsewhere (images are dropped: the CSP would refuse
// them anyway, and a model's answer must not make the browser call out).
import DOMPurify from 'dompurify';
import { marked } from 'marked';

marked.setOptions({ gfm: true, breaks: true });

DOMPurify.addHook('afterSanitizeAttributes', (node) => {
  if (node.tagName === 'A') {
    node.setAttribute('target', '_blank');
    node.setAttribute('rel', 'noopener noreferrer nofollow');
  }
});

export function markdownToHtml(text) {
  const raw = marked.parse(String(text ?? ''), { async: false }).trim();
  return DOMPurify.sanitize(raw, {
    FORBID_TAGS: ['img', 'style', 'iframe', 'form', 'input', 'button', 'svg', 'math'],
    FORBID_ATTR: ['style'],
  });
}
