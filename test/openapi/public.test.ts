/**
 * Two public OpenAPI descriptions that nobody on this project wrote (Swagger Petstore, OpenAPI
 * 3.0.4; Redocly Museum, OpenAPI 3.1.0), read from ../shared/openapi next to the repository:
 * each becomes a typed client that compiles under tsc --strict, and two operations of each are
 * called against a server on 127.0.0.1 that records what it receives.
 */
import { existsSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { build, type BuildResult } from "../../src/build/build.js";
import { PACKAGE_ROOT } from "../../src/version.js";
import { compile, MODULE_MODES } from "../helpers/tsc.js";
import { startRecorder, type Recorder } from "./recorder.js";

const SHARED = join(PACKAGE_ROOT, "..", "shared", "openapi");
const present =
  existsSync(join(SHARED, "petstore3.openapi.yaml")) &&
  existsSync(join(SHARED, "museum.openapi.yaml"));
const OUT = join(PACKAGE_ROOT, "test/openapi/__out__/public");

/** Uses of the generated clients that must type-check: typed inputs and responses, and refused mistakes. */
const USAGE = `import { createPetstoreClient, type Pet } from "./petstore.js";
import { createMuseumClient, type MuseumTicketsConfirmation, type SpecialEvent, type TicketType } from "./museum.js";

export async function usage(baseUrl: string): Promise<void> {
  const pets = createPetstoreClient({ baseUrl });
  const pet: Pet = await pets.getPetById({ petId: 7 });
  const name: string = pet.name;
  const status: "available" | "pending" | "sold" | undefined = pet.status;
  const sold: Pet[] = await pets.findPetsByStatus({ query: { status: "sold" } });
  const created: Pet = await pets.addPet({ body: { name: "Rex", photoUrls: [] } }, { idempotencyKey: "k-1" });
  const inventory = await pets.getInventory();
  const counts: Record<string, number> = inventory.data;
  // @ts-expect-error petId is an integer in the document
  await pets.getPetById({ petId: "7" });
  // @ts-expect-error status is an enum
  await pets.findPetsByStatus({ query: { status: "lost" } });
  // @ts-expect-error photoUrls is required by the Pet schema
  await pets.addPet({ body: { name: "Rex" } });

  const museum = createMuseumClient({ baseUrl });
  const events: SpecialEvent[] = await museum.listSpecialEvents({ query: { startDate: "2024-01-01", limit: 5 } });
  const price: number = events[0]?.price ?? 0;
  const ticket: MuseumTicketsConfirmation = await museum.buyMuseumTickets({ body: { ticketType: "event", ticketDate: "2024-01-02", email: "a@example.com" } });
  const code: string = ticket.confirmationCode;
  const kind: TicketType = ticket.ticketType;
  await museum.deleteSpecialEvent({ eventId: "e-1" }) satisfies void;
  // @ts-expect-error ticketDate is required (from Ticket, through allOf)
  await museum.buyMuseumTickets({ body: { ticketType: "general" } });
  // @ts-expect-error ticketType is "event" | "general"
  await museum.buyMuseumTickets({ body: { ticketType: "vip", ticketDate: "2024-01-02" } });
  void [name, status, sold, created, counts, price, code, kind];
}
`;

describe.skipIf(!present)(
  "public OpenAPI descriptions (skipped: ../shared/openapi is not next to the repository)",
  () => {
    let result: BuildResult;
    let server: Recorder;
    // the modules exist only once built; their real types are checked by compiling usage.ts above
    type Call<I, R> = (input: I, options?: { idempotencyKey?: string }) => Promise<R>;
    interface Pet {
      id?: number;
      name: string;
      photoUrls: string[];
    }
    interface Petstore {
      createPetstoreClient(config: { baseUrl: string }): {
        getPetById: Call<{ petId: number }, Pet>;
        findPetsByStatus: Call<{ query?: { status?: string } }, Pet[]>;
        addPet: Call<{ body: Pet }, Pet>;
      };
    }
    interface Museum {
      createMuseumClient(config: { baseUrl: string }): {
        listSpecialEvents: Call<
          { query?: { startDate?: string; endDate?: string; limit?: number } },
          unknown[]
        >;
        buyMuseumTickets: Call<
          { body: { ticketType: string; ticketDate: string; eventId?: string; email?: string } },
          { confirmationCode: string }
        >;
        deleteSpecialEvent: Call<{ eventId: string }, void>;
      };
    }
    let petstore: Petstore;
    let museum: Museum;

    beforeAll(async () => {
      // first, so that afterAll has a server to close even when the build throws
      server = await startRecorder();
      rmSync(OUT, { recursive: true, force: true });
      result = await build(
        ["test/openapi/public/petstore.yaml", "test/openapi/public/museum.yaml"],
        { cwd: PACKAGE_ROOT, out: OUT, allowOutsideProject: true },
      );
      writeFileSync(join(OUT, "usage.ts"), USAGE);
      if (result.written) {
        petstore = (await import(pathToFileURL(join(OUT, "petstore.ts")).href)) as Petstore;
        museum = (await import(pathToFileURL(join(OUT, "museum.ts")).href)) as Museum;
      }
    });
    afterAll(async () => {
      await server.close();
      rmSync(OUT, { recursive: true, force: true });
    });

    it("builds both clients without errors; what is left out is reported in the document", () => {
      expect(result.diagnostics.filter((d) => d.severity === "error")).toEqual([]);
      expect(result.written).toBe(true);
      const skipped = result.diagnostics
        .filter((d) => d.code === "RG607")
        .map((d) => `${d.file} ${d.message}`);
      // the museum's QR code is a PNG: a JSON client cannot return it, and says so
      expect(skipped).toEqual([
        "../shared/openapi/museum.openapi.yaml getTicketCode (GET /tickets/{ticketId}/qr): its success response is 200 image/png: generated clients read JSON",
      ]);
      const museumOps = result.checked.policies
        .find((p) => p.dependency === "museum")!
        .operations.map((o) => o.name);
      expect(museumOps).toEqual([
        "getMuseumHours",
        "listSpecialEvents",
        "createSpecialEvent",
        "getSpecialEvent",
        "deleteSpecialEvent",
        "updateSpecialEvent",
        "buyMuseumTickets",
      ]);
      const petOps = result.checked.policies.find((p) => p.dependency === "petstore")!.operations;
      expect(petOps.map((o) => o.name)).toEqual([
        "getPetById",
        "findPetsByStatus",
        "addPet",
        "getInventory",
      ]);
      expect(petOps.find((o) => o.name === "addPet")).toMatchObject({
        method: "POST",
        path: "/pet",
        repeatable: true,
        idempotency: "key",
      });
    });

    it.each(Object.keys(MODULE_MODES) as (keyof typeof MODULE_MODES)[])(
      "the generated code and its typed use compile under tsc --strict (%s)",
      async (mode) => {
        const files = result.plans[0]!.changes.filter((c) => c.kind !== "remove").map((c) =>
          join(OUT, c.path),
        );
        expect(await compile([...files, join(OUT, "usage.ts")], mode)).toBe("");
      },
    );

    it("petstore: GET with a path parameter, POST with a JSON body and an idempotency key", async () => {
      const client = petstore.createPetstoreClient({ baseUrl: `${server.url}/api/v3` });
      const rex = {
        id: 7,
        name: "Rex",
        photoUrls: ["https://img/rex.png"],
        status: "available" as const,
        tags: [{ id: 1, name: "good" }],
      };
      server.reply("GET /api/v3/pet/7", 200, rex);
      const pet = await client.getPetById({ petId: 7 });
      expect(pet).toEqual(rex);
      expect(server.requests.at(-1)).toMatchObject({
        method: "GET",
        path: "/api/v3/pet/7",
        query: {},
        body: undefined,
      });

      server.reply("GET /api/v3/pet/findByStatus", 200, [rex]);
      const sold = await client.findPetsByStatus({ query: { status: "sold" } });
      expect(sold.map((p) => p.name)).toEqual(["Rex"]);
      expect(server.requests.at(-1)).toMatchObject({
        method: "GET",
        path: "/api/v3/pet/findByStatus",
        query: { status: "sold" },
      });

      server.reply("POST /api/v3/pet", 200, { ...rex, id: 8, name: "Fido" });
      const created = await client.addPet({ body: { name: "Fido", photoUrls: [] } });
      expect(created.id).toBe(8);
      const post = server.requests.at(-1)!;
      expect(post).toMatchObject({
        method: "POST",
        path: "/api/v3/pet",
        body: { name: "Fido", photoUrls: [] },
      });
      expect(post.headers["content-type"]).toMatch(/^application\/json/);
      expect(post.headers["idempotency-key"]).toMatch(/.+/);
    });

    it("museum: GET with query parameters, POST of an allOf body, DELETE with no content", async () => {
      const client = museum.createMuseumClient({ baseUrl: server.url });
      const event = {
        eventId: "e-1",
        name: "Pirate Coding Workshop",
        location: "Computer Room",
        eventDescription: "Arr",
        dates: ["2024-10-29"],
        price: 45,
      };
      server.reply("GET /special-events", 200, [event]);
      const events = await client.listSpecialEvents({
        query: { startDate: "2024-10-01", endDate: "2024-10-31", limit: 5 },
      });
      expect(events).toEqual([event]);
      expect(server.requests.at(-1)).toMatchObject({
        method: "GET",
        path: "/special-events",
        query: { startDate: "2024-10-01", endDate: "2024-10-31", limit: "5" },
      });

      const confirmation = {
        ticketId: "t-1",
        ticketDate: "2024-10-29",
        ticketType: "event",
        eventId: "e-1",
        message: "Museum special event ticket purchased",
        confirmationCode: "ticket-event-1",
      };
      server.reply("POST /tickets", 201, confirmation);
      const ticket = await client.buyMuseumTickets({
        body: {
          ticketType: "event",
          ticketDate: "2024-10-29",
          eventId: "e-1",
          email: "todd@example.com",
        },
      });
      expect(ticket.confirmationCode).toBe("ticket-event-1");
      expect(server.requests.at(-1)).toMatchObject({
        method: "POST",
        path: "/tickets",
        body: {
          ticketType: "event",
          ticketDate: "2024-10-29",
          eventId: "e-1",
          email: "todd@example.com",
        },
      });

      server.reply("DELETE /special-events/e-1", 204, undefined);
      await expect(client.deleteSpecialEvent({ eventId: "e-1" })).resolves.toBeUndefined();
      expect(server.requests.at(-1)).toMatchObject({
        method: "DELETE",
        path: "/special-events/e-1",
      });
    });
  },
);
