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
import { plural } from "@/lib/format";
import { filterParams } from "@/lib/search-query/query-string";
import { usePortalState } from "./use-portal-state";

export function App() {
  const { query, file, setQuery, openFile } = usePortalState();
  const cart = useCart();
  const [cartOpen, setCartOpen] = useState(false);
  const setPrefix = (prefix: string) => setQuery((s) => ({ ...s, prefix, offset: 0 }));

  return (
    <div className="app">
      <a href="#results-heading" className="skip-link">
        Skip to results
      </a>
      <header className="app-header">
        <h1 className="brand">
          ndnsci <span className="brand-sub">find science files by what they are, fetch them by name</span>
        </h1>
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
              actions={(rows, total) => <ResultActions rows={rows} total={total} search={filterParams(query).toString()} />}
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

      {cartOpen ? (
        <div id="cart-drawer" className="drawer">
          <ErrorBoundary area="cart">
            <CartPanel onClose={() => setCartOpen(false)} onOpenFile={openFile} />
          </ErrorBoundary>
        </div>
      ) : null}
    </div>
  );
}
