import { Component, type ErrorInfo, type ReactNode } from "react";
import { Notice } from "./Notice";

interface Props {
  children: ReactNode;
  /** where this boundary sits, for the message */
  area: string;
}

/** A bug in one part of the page shows a message there instead of blanking the whole page. */
export class ErrorBoundary extends Component<Props, { error: Error | null }> {
  state = { error: null as Error | null };

  static getDerivedStateFromError(error: Error) {
    return { error };
  }

  componentDidCatch(error: Error, info: ErrorInfo) {
    console.error(`ndnsci portal: ${this.props.area} crashed`, error, info.componentStack);
  }

  render() {
    if (!this.state.error) return this.props.children;
    return (
      <Notice
        tone="error"
        title={`The ${this.props.area} stopped working`}
        action={
          <button type="button" className="button" onClick={() => this.setState({ error: null })}>
            Reload this part
          </button>
        }
      >
        <p>{this.state.error.message}</p>
      </Notice>
    );
  }
}
