// The transfer routes: submit (POST /transfers), the newest jobs, one job and its files,
// cancel (DELETE) and retry; submitting, cancelling and retrying send the session's token.
import { keepPreviousData, useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { api, call } from "@/api/client";
import { routes } from "@/api/routes";
import { bearer } from "../token";
import { type FileState, isActive, type TransferJob, type TransferSelection } from "../types";

/** How often the list of jobs is asked again while one of them runs. */
export const LIST_POLL_MS = 2000;
/** The files shown in a job's view (the API pages them; a job may hold a million). */
export const FILES_LIMIT = 1000;

export const transferKeys = {
  all: ["transfers"] as const,
  list: () => [...transferKeys.all, "list"] as const,
  job: (id: number) => [...transferKeys.all, "job", id] as const,
  files: (id: number, state: FileState | null) => [...transferKeys.all, "files", id, state] as const,
};

export interface SubmitTransfer {
  selection: TransferSelection;
  destination: string;
  engine: string;
  token: string;
}

export function submitTransfer({ selection, destination, engine, token }: SubmitTransfer): Promise<TransferJob> {
  return call((signal) =>
    api.POST(routes.submitTransfer.path, { body: { ...selection, destination, engine }, headers: bearer(token), signal }),
  );
}

export function useSubmitTransfer() {
  const client = useQueryClient();
  return useMutation({
    mutationFn: submitTransfer,
    onSuccess: (job) => {
      client.setQueryData(transferKeys.job(job.id), job);
      void client.invalidateQueries({ queryKey: transferKeys.list() });
    },
  });
}

export function useTransfers() {
  return useQuery({
    queryKey: transferKeys.list(),
    queryFn: async ({ signal }) =>
      (await call((s) => api.GET(routes.transfers.path, { params: { query: { limit: 100 } }, signal: s }), { signal })).jobs,
    refetchInterval: (query) => (query.state.data?.some(isActive) ? LIST_POLL_MS : false),
  });
}

export function useTransfer(id: number) {
  return useQuery({
    queryKey: transferKeys.job(id),
    queryFn: ({ signal }) => call((s) => api.GET(routes.transfer.path, { params: { path: { job_id: id } }, signal: s }), { signal }),
  });
}

export function useTransferFiles(id: number, state: FileState | null) {
  return useQuery({
    queryKey: transferKeys.files(id, state),
    queryFn: async ({ signal }) =>
      (
        await call(
          (s) =>
            api.GET(routes.transferFiles.path, {
              params: { path: { job_id: id }, query: { state: state ?? undefined, limit: FILES_LIMIT } },
              signal: s,
            }),
          { signal },
        )
      ).files,
    placeholderData: keepPreviousData,
  });
}

function useJobAction(send: (id: number, token: string) => Promise<TransferJob>) {
  const client = useQueryClient();
  return useMutation({
    mutationFn: ({ id, token }: { id: number; token: string }) => send(id, token),
    onSuccess: (job) => {
      client.setQueryData(transferKeys.job(job.id), job);
      void client.invalidateQueries({ queryKey: transferKeys.list() });
      void client.invalidateQueries({ queryKey: [...transferKeys.all, "files", job.id] });
    },
  });
}

export function useCancelTransfer() {
  return useJobAction((id, token) =>
    call((signal) => api.DELETE(routes.cancelTransfer.path, { params: { path: { job_id: id } }, headers: bearer(token), signal })),
  );
}

export function useRetryTransfer() {
  return useJobAction((id, token) =>
    call((signal) => api.POST(routes.retryTransfer.path, { params: { path: { job_id: id } }, headers: bearer(token), signal })),
  );
}
