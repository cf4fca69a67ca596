--
-- PostgreSQL database dump
--


-- Dumped from database version 15.20 (Debian 15.20-0+deb12u1)
-- Dumped by pg_dump version 15.20 (Debian 15.20-0+deb12u1)

SET statement_timeout = 0;
SET lock_timeout = 0;
SET idle_in_transaction_session_timeout = 0;
SET client_encoding = 'UTF8';
SET standard_conforming_strings = on;
SELECT pg_catalog.set_config('search_path', '', false);
SET check_function_bodies = false;
SET xmloption = content;
SET client_min_messages = warning;
SET row_security = off;

--
-- Name: public; Type: SCHEMA; Schema: -; Owner: -
--



--
-- Name: SCHEMA public; Type: COMMENT; Schema: -; Owner: -
--



SET default_tablespace = '';

SET default_table_access_method = heap;

--
-- Name: chunks; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.chunks (
    id bigint NOT NULL,
    sha256 character varying NOT NULL,
    seq integer NOT NULL,
    text character varying NOT NULL,
    terms character varying NOT NULL,
    length integer NOT NULL,
    language character varying NOT NULL,
    page integer,
    sheet character varying,
    section character varying
);


--
-- Name: chunks_id_seq; Type: SEQUENCE; Schema: public; Owner: -
--

CREATE SEQUENCE public.chunks_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;


--
-- Name: chunks_id_seq; Type: SEQUENCE OWNED BY; Schema: public; Owner: -
--

ALTER SEQUENCE public.chunks_id_seq OWNED BY public.chunks.id;


--
-- Name: documents; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.documents (
    id character varying NOT NULL,
    message_id bigint NOT NULL,
    file_id bigint NOT NULL,
    "position" integer NOT NULL,
    contents json NOT NULL
);


--
-- Name: extractions; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.extractions (
    key character varying NOT NULL,
    mime character varying NOT NULL,
    status character varying NOT NULL,
    items json NOT NULL,
    warnings json NOT NULL
);


--
-- Name: files; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.files (
    id bigint NOT NULL,
    mandate_id integer NOT NULL,
    user_id integer NOT NULL,
    name character varying NOT NULL,
    ext character varying NOT NULL,
    mime character varying NOT NULL,
    size bigint NOT NULL,
    sha256 character varying NOT NULL,
    origin character varying NOT NULL,
    created_at timestamp with time zone NOT NULL
);


--
-- Name: files_id_seq; Type: SEQUENCE; Schema: public; Owner: -
--

CREATE SEQUENCE public.files_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;


--
-- Name: files_id_seq; Type: SEQUENCE OWNED BY; Schema: public; Owner: -
--

ALTER SEQUENCE public.files_id_seq OWNED BY public.files.id;


--
-- Name: idempotency; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.idempotency (
    key character varying NOT NULL,
    response json NOT NULL,
    created_at timestamp with time zone NOT NULL,
    fingerprint character varying NOT NULL,
    workflow_id character varying
);


--
-- Name: logs; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.logs (
    id bigint NOT NULL,
    workflow_id character varying NOT NULL,
    key character varying NOT NULL,
    round integer NOT NULL,
    message character varying NOT NULL,
    type character varying NOT NULL,
    "timestamp" timestamp with time zone NOT NULL,
    agent_name character varying NOT NULL,
    status character varying NOT NULL,
    progress integer
);


--
-- Name: logs_id_seq; Type: SEQUENCE; Schema: public; Owner: -
--

CREATE SEQUENCE public.logs_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;


--
-- Name: logs_id_seq; Type: SEQUENCE OWNED BY; Schema: public; Owner: -
--

ALTER SEQUENCE public.logs_id_seq OWNED BY public.logs.id;


--
-- Name: messages; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.messages (
    id bigint NOT NULL,
    workflow_id character varying NOT NULL,
    key character varying NOT NULL,
    round integer NOT NULL,
    parent_message_id bigint,
    started_at timestamp with time zone NOT NULL,
    finished_at timestamp with time zone,
    sequence_no integer NOT NULL,
    status character varying NOT NULL,
    role character varying NOT NULL,
    content character varying NOT NULL,
    agent_name character varying NOT NULL,
    bytes_sent integer NOT NULL,
    bytes_received integer NOT NULL,
    tokens_used integer NOT NULL,
    processing_time double precision NOT NULL,
    meta json NOT NULL,
    deleted boolean NOT NULL
);


--
-- Name: messages_id_seq; Type: SEQUENCE; Schema: public; Owner: -
--

CREATE SEQUENCE public.messages_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;


--
-- Name: messages_id_seq; Type: SEQUENCE OWNED BY; Schema: public; Owner: -
--

ALTER SEQUENCE public.messages_id_seq OWNED BY public.messages.id;


--
-- Name: round_files; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.round_files (
    workflow_id character varying NOT NULL,
    round integer NOT NULL,
    prompt character varying NOT NULL,
    file_ids json NOT NULL,
    passwords json NOT NULL
);


--
-- Name: workflows; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.workflows (
    id character varying NOT NULL,
    mandate_id integer NOT NULL,
    user_id integer NOT NULL,
    name character varying NOT NULL,
    status character varying NOT NULL,
    started_at timestamp with time zone NOT NULL,
    last_activity timestamp with time zone NOT NULL,
    current_round integer NOT NULL,
    progress integer NOT NULL,
    bytes_sent bigint NOT NULL,
    bytes_received bigint NOT NULL,
    tokens_used bigint NOT NULL,
    processing_time double precision NOT NULL,
    last_message_id bigint NOT NULL,
    last_log_id bigint NOT NULL,
    next_sequence_no integer NOT NULL
);


--
-- Name: chunks id; Type: DEFAULT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.chunks ALTER COLUMN id SET DEFAULT nextval('public.chunks_id_seq'::regclass);


--
-- Name: files id; Type: DEFAULT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.files ALTER COLUMN id SET DEFAULT nextval('public.files_id_seq'::regclass);


--
-- Name: logs id; Type: DEFAULT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.logs ALTER COLUMN id SET DEFAULT nextval('public.logs_id_seq'::regclass);


--
-- Name: messages id; Type: DEFAULT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.messages ALTER COLUMN id SET DEFAULT nextval('public.messages_id_seq'::regclass);


--
-- Data for Name: chunks; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.chunks VALUES (1, 'f723638db6e763cf4ccadad38a3d38a02d9ecab95dab1f0bbf00e801991b5f92', 0, 'Lorem ipsum dolor sit amet, consetetur sadipscing elitr, sed diam nonumy eirmod tempor invidunt ut labore et dolore magna aliquyam erat, sed diam voluptua. At vero eos et accusam et justo duo dolores et ea rebum. Stet clita kasd gubergren, no sea taki- mata sanctus est Lorem ipsum dolor sit amet. Lorem ipsum dolor sit amet, consetetur sadipscing elitr, sed diam nonumy eirmod tempor invidunt ut labore et dolore magna aliquyam erat, sed diam voluptua. At vero eos et accusam et justo duo dolores et ea rebum.', 'lorem ipsum dolor sit amet consetetur sadipscing elitr sed diam nonumy eirmod tempor invidunt ut labore et dolore magna aliquyam erat sed diam voluptua at vero eos et accusam et justo duo dolores et ea rebum stet clita kasd gubergren no sea taki mata sanctus est lorem ipsum dolor sit amet lorem ipsum dolor sit amet consetetur sadipscing elitr sed diam nonumy eirmod tempor invidunt ut labore et dolore magna aliquyam erat sed diam voluptua at vero eos et accusam et justo duo dolores et ea rebum', 87, 'la', 1, NULL, NULL);
INSERT INTO public.chunks VALUES (2, 'f723638db6e763cf4ccadad38a3d38a02d9ecab95dab1f0bbf00e801991b5f92', 1, 'Stet clita kasd gubergren, no sea takimata sanctus est Lorem ipsum dolor sit amet. 1', 'stet clita kasd gubergren no sea takimata sanctus est lorem ipsum dolor sit amet 1', 15, 'la', 1, NULL, NULL);
INSERT INTO public.chunks VALUES (3, '511a422c3f5ee11b9b828aac404da5157944ba53d1594f803ef7017904b9278e', 0, 'Stanley Cups Team Location Stanley Cups Blues STL 1 Flyers PHI 2 Maple Leafs TOR 13', 'stanley cup team locat stanley cup blue stl 1 flyer phi 2 mapl leaf tor 13', 16, 'en', NULL, NULL, 'table');


--
-- Data for Name: documents; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.documents VALUES ('doc_1_0', 1, 1, 0, '[{"sequenceNr":1,"name":"page 1","ext":"txt","contentType":"text/plain","data":"Lorem ipsum dolor sit amet, consetetur sadipscing elitr, sed diam nonumy eirmod\ntempor invidunt ut labore et dolore magna aliquyam erat, sed diam voluptua. At vero\neos et accusam et justo duo dolores et ea rebum. Stet clita kasd gubergren, no sea taki-\nmata sanctus est Lorem ipsum dolor sit amet. Lorem ipsum dolor sit amet, consetetur\nsadipscing elitr, sed diam nonumy eirmod tempor invidunt ut labore et dolore magna\naliquyam erat, sed diam voluptua. At vero eos et accusam et justo duo dolores et ea\nrebum. Stet clita kasd gubergren, no sea takimata sanctus est Lorem ipsum dolor sit\namet.\n1","dataExtracted":null,"metadata":{"extractor":"pypdf","page":1,"ocr":false,"isText":true,"base64Encoded":false,"aiProcessed":false},"summary":"page 1: 595 characters, 102 words, language fr"}]');
INSERT INTO public.documents VALUES ('doc_1_1', 1, 2, 1, '[{"sequenceNr":1,"name":"table","ext":"tsv","contentType":"text/tab-separated-values","data":"Stanley Cups\nTeam\tLocation\tStanley Cups\nBlues\tSTL\t1\nFlyers\tPHI\t2\nMaple Leafs\tTOR\t13","dataExtracted":null,"metadata":{"extractor":"csv","encoding":"utf-8","rows":5,"ocr":false,"tables":[{"name":"table","source":"table","headerRow":1,"rows":[["Stanley Cups"],["Team","Location","Stanley Cups"],["Blues","STL",1],["Flyers","PHI",2],["Maple Leafs","TOR",13]],"delimiter":"\t"}],"isText":true,"base64Encoded":false,"aiProcessed":false},"summary":"table: 83 characters, 16 words"}]');


--
-- Data for Name: extractions; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.extractions VALUES ('f723638db6e763cf4ccadad38a3d38a02d9ecab95dab1f0bbf00e801991b5f92', 'application/pdf', 'ok', '[{"sequence_nr":1,"name":"page 1","ext":"txt","content_type":"text/plain","data":"Lorem ipsum dolor sit amet, consetetur sadipscing elitr, sed diam nonumy eirmod\ntempor invidunt ut labore et dolore magna aliquyam erat, sed diam voluptua. At vero\neos et accusam et justo duo dolores et ea rebum. Stet clita kasd gubergren, no sea taki-\nmata sanctus est Lorem ipsum dolor sit amet. Lorem ipsum dolor sit amet, consetetur\nsadipscing elitr, sed diam nonumy eirmod tempor invidunt ut labore et dolore magna\naliquyam erat, sed diam voluptua. At vero eos et accusam et justo duo dolores et ea\nrebum. Stet clita kasd gubergren, no sea takimata sanctus est Lorem ipsum dolor sit\namet.\n1","is_text":true,"base64_encoded":false,"summary":"page 1: 595 characters, 102 words, language fr","metadata":{"extractor":"pypdf","page":1,"ocr":false}}]', '[]');
INSERT INTO public.extractions VALUES ('511a422c3f5ee11b9b828aac404da5157944ba53d1594f803ef7017904b9278e', 'text/tab-separated-values', 'ok', '[{"sequence_nr":1,"name":"table","ext":"tsv","content_type":"text/tab-separated-values","data":"Stanley Cups\nTeam\tLocation\tStanley Cups\nBlues\tSTL\t1\nFlyers\tPHI\t2\nMaple Leafs\tTOR\t13","is_text":true,"base64_encoded":false,"summary":"table: 83 characters, 16 words","metadata":{"extractor":"csv","encoding":"utf-8","rows":5,"ocr":false,"tables":[{"name":"table","source":"table","headerRow":1,"rows":[["Stanley Cups"],["Team","Location","Stanley Cups"],["Blues","STL",1],["Flyers","PHI",2],["Maple Leafs","TOR",13]],"delimiter":"\t"}]}}]', '[]');


--
-- Data for Name: files; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.files VALUES (1, 1, 1, 'minimal-document', 'pdf', 'application/pdf', 16978, 'f723638db6e763cf4ccadad38a3d38a02d9ecab95dab1f0bbf00e801991b5f92', 'upload', '2026-11-23 00:12:48.121174+00');
INSERT INTO public.files VALUES (2, 1, 1, 'stanley-cups', 'tsv', 'text/tab-separated-values', 91, '511a422c3f5ee11b9b828aac404da5157944ba53d1594f803ef7017904b9278e', 'upload', '2026-11-23 00:12:48.152584+00');


--
-- Data for Name: idempotency; Type: TABLE DATA; Schema: public; Owner: -
--



--
-- Data for Name: logs; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.logs VALUES (1, '4287eb72-d119-42b0-a4da-fe5c9dc301d9', '4287eb72-d119-42b0-a4da-fe5c9dc301d9:1:start', 1, 'Workflow initialized', 'info', '2026-11-23 00:12:48.353818+00', 'system', 'running', 0);
INSERT INTO public.logs VALUES (2, '4287eb72-d119-42b0-a4da-fe5c9dc301d9', '4287eb72-d119-42b0-a4da-fe5c9dc301d9:1:prepare:log', 1, 'Workflow processing started', 'info', '2026-11-23 00:12:48.5922+00', 'system', 'running', 0);
INSERT INTO public.logs VALUES (3, '4287eb72-d119-42b0-a4da-fe5c9dc301d9', '4287eb72-d119-42b0-a4da-fe5c9dc301d9:1:prepare:file:0:start', 1, 'Reading minimal-document.pdf (file 1 of 2, 16.6 KB)', 'info', '2026-11-23 00:12:48.610966+00', 'extractor', 'running', 1);
INSERT INTO public.logs VALUES (4, '4287eb72-d119-42b0-a4da-fe5c9dc301d9', '4287eb72-d119-42b0-a4da-fe5c9dc301d9:1:prepare:file:0:done', 1, 'Read minimal-document.pdf: 1 page in 4.0 s', 'info', '2026-11-23 00:12:52.647323+00', 'extractor', 'running', 5);
INSERT INTO public.logs VALUES (5, '4287eb72-d119-42b0-a4da-fe5c9dc301d9', '4287eb72-d119-42b0-a4da-fe5c9dc301d9:1:prepare:file:1:start', 1, 'Reading stanley-cups.tsv (file 2 of 2, 91 bytes)', 'info', '2026-11-23 00:12:52.679157+00', 'extractor', 'running', 5);
INSERT INTO public.logs VALUES (6, '4287eb72-d119-42b0-a4da-fe5c9dc301d9', '4287eb72-d119-42b0-a4da-fe5c9dc301d9:1:prepare:file:1:done', 1, 'Read stanley-cups.tsv: 1 part in 0.0 s', 'info', '2026-11-23 00:12:52.730481+00', 'extractor', 'running', 9);
INSERT INTO public.logs VALUES (7, '4287eb72-d119-42b0-a4da-fe5c9dc301d9', '4287eb72-d119-42b0-a4da-fe5c9dc301d9:1:plan:start', 1, 'Analyzing request and planning work', 'info', '2026-11-23 00:12:52.757929+00', 'project_manager', 'running', 10);
INSERT INTO public.logs VALUES (8, '4287eb72-d119-42b0-a4da-fe5c9dc301d9', '4287eb72-d119-42b0-a4da-fe5c9dc301d9:1:plan:done', 1, 'Work plan created: 1 task', 'info', '2026-11-23 00:12:52.79812+00', 'project_manager', 'running', 25);
INSERT INTO public.logs VALUES (9, '4287eb72-d119-42b0-a4da-fe5c9dc301d9', '4287eb72-d119-42b0-a4da-fe5c9dc301d9:1:task:t1:start', 1, 'Running task 1/1: summarizer', 'info', '2026-11-23 00:12:52.854617+00', 'summarizer', 'running', 30);
INSERT INTO public.logs VALUES (10, '4287eb72-d119-42b0-a4da-fe5c9dc301d9', '4287eb72-d119-42b0-a4da-fe5c9dc301d9:1:task:t1:done', 1, 'Task 1/1 done: summarizer', 'info', '2026-11-23 00:12:52.861119+00', 'summarizer', 'running', 90);
INSERT INTO public.logs VALUES (11, '4287eb72-d119-42b0-a4da-fe5c9dc301d9', '4287eb72-d119-42b0-a4da-fe5c9dc301d9:1:final:start', 1, 'Creating final response', 'info', '2026-11-23 00:12:52.928098+00', 'project_manager', 'running', 90);
INSERT INTO public.logs VALUES (12, '4287eb72-d119-42b0-a4da-fe5c9dc301d9', '4287eb72-d119-42b0-a4da-fe5c9dc301d9:1:final:done', 1, 'Workflow completed successfully', 'info', '2026-11-23 00:12:52.969885+00', 'project_manager', 'completed', 100);
INSERT INTO public.logs VALUES (13, '4287eb72-d119-42b0-a4da-fe5c9dc301d9', '4287eb72-d119-42b0-a4da-fe5c9dc301d9:2:start', 2, 'Resuming workflow, round 2', 'info', '2026-11-23 00:12:53.12156+00', 'system', 'running', 0);
INSERT INTO public.logs VALUES (14, '4287eb72-d119-42b0-a4da-fe5c9dc301d9', '4287eb72-d119-42b0-a4da-fe5c9dc301d9:2:prepare:log', 2, 'Workflow processing started', 'info', '2026-11-23 00:12:53.254738+00', 'system', 'running', 0);
INSERT INTO public.logs VALUES (15, '4287eb72-d119-42b0-a4da-fe5c9dc301d9', '4287eb72-d119-42b0-a4da-fe5c9dc301d9:2:plan:start', 2, 'Analyzing request and planning work', 'info', '2026-11-23 00:12:53.261766+00', 'project_manager', 'running', 10);
INSERT INTO public.logs VALUES (16, '4287eb72-d119-42b0-a4da-fe5c9dc301d9', '4287eb72-d119-42b0-a4da-fe5c9dc301d9:2:plan:done', 2, 'Work plan created: 1 task', 'info', '2026-11-23 00:12:53.366621+00', 'project_manager', 'running', 25);
INSERT INTO public.logs VALUES (17, '4287eb72-d119-42b0-a4da-fe5c9dc301d9', '4287eb72-d119-42b0-a4da-fe5c9dc301d9:2:task:t1:start', 2, 'Running task 1/1: analyst', 'info', '2026-11-23 00:12:53.416608+00', 'analyst', 'running', 30);
INSERT INTO public.logs VALUES (18, '4287eb72-d119-42b0-a4da-fe5c9dc301d9', '4287eb72-d119-42b0-a4da-fe5c9dc301d9:2:task:t1:done', 2, 'Task 1/1 done: analyst', 'info', '2026-11-23 00:12:53.508928+00', 'analyst', 'running', 90);
INSERT INTO public.logs VALUES (19, '4287eb72-d119-42b0-a4da-fe5c9dc301d9', '4287eb72-d119-42b0-a4da-fe5c9dc301d9:2:final:start', 2, 'Creating final response', 'info', '2026-11-23 00:12:53.608294+00', 'project_manager', 'running', 90);
INSERT INTO public.logs VALUES (20, '4287eb72-d119-42b0-a4da-fe5c9dc301d9', '4287eb72-d119-42b0-a4da-fe5c9dc301d9:2:final:done', 2, 'Workflow completed successfully', 'info', '2026-11-23 00:12:53.648391+00', 'project_manager', 'completed', 100);


--
-- Data for Name: messages; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.messages VALUES (1, '4287eb72-d119-42b0-a4da-fe5c9dc301d9', '4287eb72-d119-42b0-a4da-fe5c9dc301d9:1:prepare:message', 1, NULL, '2026-11-23 00:12:48.353818+00', '2026-11-23 00:12:48.353818+00', 1, 'first', 'user', 'Summarise the documents.', '', 0, 0, 0, 0, '{}', false);
INSERT INTO public.messages VALUES (2, '4287eb72-d119-42b0-a4da-fe5c9dc301d9', '4287eb72-d119-42b0-a4da-fe5c9dc301d9:1:plan:message', 1, 1, '2026-11-23 00:12:52.791557+00', '2026-11-23 00:12:52.79812+00', 2, 'step', 'assistant', 'I am working offline, without a language model: I can quote, extract and compile from your documents, but I cannot write new prose or translate. I have planned 1 step: summarise minimal-document.pdf, stanley-cups.tsv.

### Work plan

1. **summarizer** `t1`: Summarise minimal-document.pdf, stanley-cups.tsv. Summarise the documents. (inputs: minimal-document.pdf, stanley-cups.tsv)', 'project_manager', 0, 0, 768, 0.00565, '{"offline":true,"model":"offline","language":"en","plan":{"finalDocuments":[],"tasks":[{"id":"t1","agent":"summarizer","instructions":"Summarise minimal-document.pdf, stanley-cups.tsv. Summarise the documents.","inputs":["minimal-document.pdf","stanley-cups.tsv"],"outputs":[],"depends_on":[]}]}}', false);
INSERT INTO public.messages VALUES (3, '4287eb72-d119-42b0-a4da-fe5c9dc301d9', '4287eb72-d119-42b0-a4da-fe5c9dc301d9:1:task:t1:message', 1, 1, '2026-11-23 00:12:52.857939+00', '2026-11-23 00:12:52.861119+00', 3, 'step', 'assistant', '## Summary of minimal-document.pdf

_Offline extractive summary: the document''s most informative sentences, quoted verbatim (no language model was used)._

- Lorem ipsum dolor sit amet, consetetur sadipscing elitr, sed diam nonumy eirmod tempor invidunt ut labore et dolore magna aliquyam erat, sed diam voluptua.
- At vero eos et accusam et justo duo dolores et ea rebum.
- Stet clita kasd gubergren, no sea takimata sanctus est Lorem ipsum dolor sit amet.
- 1

## Summary of stanley-cups.tsv

_Offline extractive summary: the document''s most informative sentences, quoted verbatim (no language model was used)._

- Stanley Cups
- Team Location Stanley Cups
- Blues STL 1
- Flyers PHI 2
- Maple Leafs TOR 13', 'summarizer', 0, 0, 459, 0.002515, '{"taskId":"t1","offline":true,"model":"offline"}', false);
INSERT INTO public.messages VALUES (4, '4287eb72-d119-42b0-a4da-fe5c9dc301d9', '4287eb72-d119-42b0-a4da-fe5c9dc301d9:1:final:message', 1, 1, '2026-11-23 00:12:52.94194+00', '2026-11-23 00:12:52.969885+00', 4, 'last', 'assistant', 'This round ran offline, without a language model: the results are extracts from your documents, not generated text. The planned step is done.

**Delivered:** no documents

**Completed steps:** t1 (summarizer)', 'project_manager', 0, 0, 451, 0.004122, '{"offline":true,"model":"offline"}', false);
INSERT INTO public.messages VALUES (5, '4287eb72-d119-42b0-a4da-fe5c9dc301d9', '4287eb72-d119-42b0-a4da-fe5c9dc301d9:2:prepare:message', 2, NULL, '2026-11-23 00:12:53.12156+00', '2026-11-23 00:12:53.12156+00', 5, 'first', 'user', 'Which team won in 1990?', '', 0, 0, 0, 0, '{}', false);
INSERT INTO public.messages VALUES (6, '4287eb72-d119-42b0-a4da-fe5c9dc301d9', '4287eb72-d119-42b0-a4da-fe5c9dc301d9:2:plan:message', 2, 5, '2026-11-23 00:12:53.351822+00', '2026-11-23 00:12:53.366621+00', 6, 'step', 'assistant', 'I am working offline, without a language model: I can quote, extract and compile from your documents, but I cannot write new prose or translate. I have planned 1 step: answer your question from minimal-document.pdf, stanley-cups.tsv.

### Work plan

1. **analyst** `t1`: Which team won in 1990? (inputs: minimal-document.pdf, stanley-cups.tsv)', 'project_manager', 0, 0, 920, 0.006692, '{"offline":true,"model":"offline","language":"en","plan":{"finalDocuments":[],"tasks":[{"id":"t1","agent":"analyst","instructions":"Which team won in 1990?","inputs":["minimal-document.pdf","stanley-cups.tsv"],"outputs":[],"depends_on":[]}]}}', false);
INSERT INTO public.messages VALUES (7, '4287eb72-d119-42b0-a4da-fe5c9dc301d9', '4287eb72-d119-42b0-a4da-fe5c9dc301d9:2:task:t1:message', 2, 5, '2026-11-23 00:12:53.450432+00', '2026-11-23 00:12:53.508928+00', 7, 'step', 'assistant', '_Offline answer: without a language model I quote the passages of your documents that best match the question._

> Stanley Cups Team Location Stanley Cups Blues STL 1 Flyers PHI 2 Maple Leafs TOR 13

— stanley-cups.tsv, table [1]', 'analyst', 0, 0, 149, 0.056286, '{"citations":[{"fileId":2,"name":"stanley-cups.tsv","section":"table","quote":"Stanley Cups Team Location Stanley Cups Blues STL 1 Flyers PHI 2 Maple Leafs TOR 13"}],"taskId":"t1","offline":true,"model":"offline"}', false);
INSERT INTO public.messages VALUES (8, '4287eb72-d119-42b0-a4da-fe5c9dc301d9', '4287eb72-d119-42b0-a4da-fe5c9dc301d9:2:final:message', 2, 5, '2026-11-23 00:12:53.642217+00', '2026-11-23 00:12:53.648391+00', 8, 'last', 'assistant', 'This round ran offline, without a language model: the results are extracts from your documents, not generated text. The planned step is done.

**Delivered:** no documents

**Completed steps:** t1 (analyst)', 'project_manager', 0, 0, 318, 0.0041, '{"offline":true,"model":"offline"}', false);


--
-- Data for Name: round_files; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.round_files VALUES ('4287eb72-d119-42b0-a4da-fe5c9dc301d9', 1, 'Summarise the documents.', '[1,2]', '{}');
INSERT INTO public.round_files VALUES ('4287eb72-d119-42b0-a4da-fe5c9dc301d9', 2, 'Which team won in 1990?', '[]', '{}');


--
-- Data for Name: workflows; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.workflows VALUES ('4287eb72-d119-42b0-a4da-fe5c9dc301d9', 1, 1, 'Summarise the documents.', 'completed', '2026-11-23 00:12:48.353818+00', '2026-11-23 00:12:53.648391+00', 2, 100, 0, 0, 3065, 0.079365, 8, 20, 9);


--
-- Name: chunks_id_seq; Type: SEQUENCE SET; Schema: public; Owner: -
--

SELECT pg_catalog.setval('public.chunks_id_seq', 3, true);


--
-- Name: files_id_seq; Type: SEQUENCE SET; Schema: public; Owner: -
--

SELECT pg_catalog.setval('public.files_id_seq', 2, true);


--
-- Name: logs_id_seq; Type: SEQUENCE SET; Schema: public; Owner: -
--

SELECT pg_catalog.setval('public.logs_id_seq', 20, true);


--
-- Name: messages_id_seq; Type: SEQUENCE SET; Schema: public; Owner: -
--

SELECT pg_catalog.setval('public.messages_id_seq', 8, true);


--
-- Name: chunks chunks_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.chunks
    ADD CONSTRAINT chunks_pkey PRIMARY KEY (id);


--
-- Name: documents documents_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.documents
    ADD CONSTRAINT documents_pkey PRIMARY KEY (id);


--
-- Name: extractions extractions_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.extractions
    ADD CONSTRAINT extractions_pkey PRIMARY KEY (key);


--
-- Name: files files_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.files
    ADD CONSTRAINT files_pkey PRIMARY KEY (id);


--
-- Name: idempotency idempotency_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.idempotency
    ADD CONSTRAINT idempotency_pkey PRIMARY KEY (key);


--
-- Name: logs logs_key_key; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.logs
    ADD CONSTRAINT logs_key_key UNIQUE (key);


--
-- Name: logs logs_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.logs
    ADD CONSTRAINT logs_pkey PRIMARY KEY (id);


--
-- Name: messages messages_key_key; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.messages
    ADD CONSTRAINT messages_key_key UNIQUE (key);


--
-- Name: messages messages_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.messages
    ADD CONSTRAINT messages_pkey PRIMARY KEY (id);


--
-- Name: round_files round_files_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.round_files
    ADD CONSTRAINT round_files_pkey PRIMARY KEY (workflow_id, round);


--
-- Name: workflows workflows_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.workflows
    ADD CONSTRAINT workflows_pkey PRIMARY KEY (id);


--
-- Name: ix_chunks_sha_seq; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX ix_chunks_sha_seq ON public.chunks USING btree (sha256, seq);


--
-- Name: ix_chunks_terms; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX ix_chunks_terms ON public.chunks USING gin (to_tsvector('simple'::regconfig, (terms)::text));


--
-- Name: ix_documents_file_id; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX ix_documents_file_id ON public.documents USING btree (file_id);


--
-- Name: ix_documents_message_id; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX ix_documents_message_id ON public.documents USING btree (message_id);


--
-- Name: ix_files_mandate_id; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX ix_files_mandate_id ON public.files USING btree (mandate_id);


--
-- Name: ix_files_sha256; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX ix_files_sha256 ON public.files USING btree (sha256);


--
-- Name: ix_files_user_id; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX ix_files_user_id ON public.files USING btree (user_id);


--
-- Name: ix_idempotency_workflow_id; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX ix_idempotency_workflow_id ON public.idempotency USING btree (workflow_id);


--
-- Name: ix_logs_workflow_id; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX ix_logs_workflow_id ON public.logs USING btree (workflow_id, id);


--
-- Name: ix_messages_workflow_id; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX ix_messages_workflow_id ON public.messages USING btree (workflow_id, id);


--
-- Name: ix_workflows_owner_activity; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX ix_workflows_owner_activity ON public.workflows USING btree (mandate_id, user_id, last_activity);


--
-- Name: documents documents_file_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.documents
    ADD CONSTRAINT documents_file_id_fkey FOREIGN KEY (file_id) REFERENCES public.files(id) ON DELETE CASCADE;


--
-- Name: documents documents_message_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.documents
    ADD CONSTRAINT documents_message_id_fkey FOREIGN KEY (message_id) REFERENCES public.messages(id) ON DELETE CASCADE;


--
-- Name: logs logs_workflow_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.logs
    ADD CONSTRAINT logs_workflow_id_fkey FOREIGN KEY (workflow_id) REFERENCES public.workflows(id) ON DELETE CASCADE;


--
-- Name: messages messages_workflow_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.messages
    ADD CONSTRAINT messages_workflow_id_fkey FOREIGN KEY (workflow_id) REFERENCES public.workflows(id) ON DELETE CASCADE;


--
-- Name: round_files round_files_workflow_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.round_files
    ADD CONSTRAINT round_files_workflow_id_fkey FOREIGN KEY (workflow_id) REFERENCES public.workflows(id) ON DELETE CASCADE;


--
-- PostgreSQL database dump complete
--


