import type { ReactNode } from "react";

export type NoticeTone = "info" | "warning" | "error" | "success";

interface NoticeProps {
  tone?: NoticeTone;
  title: string;
  children?: ReactNode;
  action?: ReactNode;
}

/** A message in the page: errors are announced at once (alert), the rest politely (status). */
export function Notice({ tone = "info", title, children, action }: NoticeProps) {
  return (
    <div className={`notice notice-${tone}`} role={tone === "error" ? "alert" : "status"}>
      <p className="notice-title">{title}</p>
      {children ? <div className="notice-body">{children}</div> : null}
      {action ? <div className="notice-action">{action}</div> : null}
    </div>
  );
}
