import { useState } from "react";
import { ErrorBoundary } from "@/components/ui/ErrorBoundary";
import { FacetPanel } from "@/features/facets/components/FacetPanel";
import { toCartItem, useCart } from "@/features/fetch/cart";
import { CartPanel } from "@/features/fetch/components/CartPanel";
import { ResultActions } from "@/features/fetch/components/ResultActions";
import { MetadataPanel } from "@/features/metadata/components/MetadataPanel";
import { NamePrefixBox } from "@/features/names/components/NamePrefixBox";
import { NamespaceTree } from "@/features/names/components/NamespaceTree";
import { ActiveFilters } from "@/features/search/components/ActiveFilters";
import { SearchBox } from "@/features/search/components/SearchBox";
import { SearchResults } from "@/features/search/components/SearchResults";
import { TimeRange } from "@/features/search/components/TimeRange";
import { StatusIndicator } from "@/features/status/components/StatusIndicator";
import { TransferForm } from "@/features/transfers/components/TransferForm";
import { TransferSearchButton } from "@/features/transfers/components/TransferSearchButton";
import { TransfersPage } from "@/features/transfers/components/TransfersPage";
import { plural } from "@/lib/format";
import { filterParams, type PortalView } from "@/lib/search-query/query-string";
import { usePortalState, viewHref } from "./use-portal-state";

export function App() {
  const state = usePortalState();
  const { query, file, view, job, setQuery, openFile, openView } = state;
  const cart = useCart();
  const [cartOpen, setCartOpen] = useState(false);
  const setPrefix = (prefix: string) => setQuery((s) => ({ ...s, prefix, offset: 0 }));
  const openJob = (id: number | null) => openView("transfers", id);
  const pageLink = (to: PortalView, label: string) => (
    <a
      href={viewHref(state, to)}
      className={`nav-link${view === to ? " nav-current" : ""}`}
      aria-current={view === to ? "page" : undefined}
      onClick={(e) => {
        if (e.metaKey || e.ctrlKey || e.shiftKey || e.altKey || e.button !== 0) return;
        e.preventDefault();
        openView(to);
      }}
    >
      {label}
    </a>
  );

  return (
    <div className="app">
      <a href={view === "search" ? "#results-heading" : "#transfers-main"} className="skip-link">
        {view === "search" ? "Skip to results" : "Skip to transfers"}
      </a>
      <header className="app-header">
        <h1 className="brand">
          ndnsci <span className="brand-sub">find science files by what they are, fetch them by name</span>
        </h1>
        <nav className="page-nav" aria-label="Pages">
          {pageLink("search", "Search")}
          {pageLink("transfers", "Transfers")}
        </nav>
        <StatusIndicator />
        <button
          type="button"
          className="button cart-button"
          aria-expanded={cartOpen}
          aria-controls="cart-drawer"
          aria-label={`Cart, ${plural(cart.items.length, "file")}`}
          onClick={() => setCartOpen((o) => !o)}
        >
          Cart <span className="badge">{cart.items.length}</span>
        </button>
      </header>

      {view === "transfers" ? (
        <main className="main transfers-main" id="transfers-main" tabIndex={-1}>
          <ErrorBoundary area="transfers">
            <TransfersPage job={job} onOpenJob={openJob} />
          </ErrorBoundary>
        </main>
      ) : (
      <div className={`layout${file ? " with-detail" : ""}`}>
        <aside className="sidebar" aria-label="Filters">
          <ErrorBoundary area="name filters">
            <NamePrefixBox prefix={query.prefix} onApply={setPrefix} onOpenFile={openFile} />
            <NamespaceTree prefix={query.prefix} onSelectPrefix={setPrefix} onOpenFile={openFile} />
          </ErrorBoundary>
          <ErrorBoundary area="time filter">
            <TimeRange
              start={query.start}
              end={query.end}
              onApply={(start, end) => setQuery((s) => ({ ...s, start, end, offset: 0 }))}
            />
          </ErrorBoundary>
          <ErrorBoundary area="facets">
            <FacetPanel query={query} onQuery={setQuery} />
          </ErrorBoundary>
        </aside>

        <main className="main">
          <SearchBox
            value={query.q}
            onType={(q) => setQuery((s) => ({ ...s, q, offset: 0 }), { replace: true })}
            onSubmit={(q) => setQuery((s) => ({ ...s, q, offset: 0 }))}
          />
          <ActiveFilters query={query} onChange={setQuery} />
          <ErrorBoundary area="results">
            <SearchResults
              query={query}
              selected={file}
              onQuery={setQuery}
              onOpen={(row) => openFile(row.name)}
              isInCart={cart.has}
              onToggleCart={(row, add) => (add ? cart.add([toCartItem(row)]) : cart.remove([row.name]))}
              actions={(rows, total) => (
                <>
                  <ResultActions rows={rows} total={total} search={filterParams(query).toString()} />
                  <TransferSearchButton search={filterParams(query).toString()} total={total} onOpenJob={openJob} />
                </>
              )}
              emptyHelp={<ActiveFilters query={query} onChange={setQuery} />}
            />
          </ErrorBoundary>
        </main>

        {file ? (
          <div className="detail">
            <ErrorBoundary area="metadata panel">
              <MetadataPanel
                key={file}
                name={file}
                onClose={() => openFile(null)}
                actions={(details) =>
                  cart.has(details.name) ? (
                    <button type="button" className="button" onClick={() => cart.remove([details.name])}>
                      Remove from cart
                    </button>
                  ) : (
                    <button
                      type="button"
                      className="button button-primary"
                      onClick={() =>
                        cart.add([toCartItem(details)])
                      }
                    >
                      Add to cart
                    </button>
                  )
                }
              />
            </ErrorBoundary>
          </div>
        ) : null}
      </div>
      )}

      {cartOpen ? (
        <div id="cart-drawer" className="drawer">
          <ErrorBoundary area="cart">
            <CartPanel
              onClose={() => setCartOpen(false)}
              onOpenFile={(name) => {
                if (view !== "search") openView("search");
                openFile(name);
              }}
              transfer={
                <TransferForm
                  selection={{ names: cart.items.map((i) => i.name) }}
                  what={`the ${plural(cart.items.length, "file")} in the cart`}
                  onOpenJob={(id) => {
                    setCartOpen(false);
                    openJob(id);
                  }}
                />
              }
            />
          </ErrorBoundary>
        </div>
      ) : null}
    </div>
  );
}
