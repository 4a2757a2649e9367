import { StrictMode } from "react";
import { createRoot } from "react-dom/client";
import { App } from "./app/App";
import { Providers } from "./app/Providers";
import { ErrorBoundary } from "./components/ui/ErrorBoundary";
import "./styles.css";

createRoot(document.getElementById("root")!).render(
  <StrictMode>
    <ErrorBoundary area="portal">
      <Providers>
        <App />
      </Providers>
    </ErrorBoundary>
  </StrictMode>,
);
